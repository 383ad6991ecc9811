from django.urls import path

from lessons import board_views, lesson_views, views

app_name = "lessons"

# Full paths: the pupils' /card/ sits beside the class pages (/classes/) and learners' records.
urlpatterns = [
    path("card/", views.card_sign_in, name="card"),
    path("classes/<int:pk>/cards/", lesson_views.group_cards, name="group_cards"),
    path(
        "classes/<int:pk>/cards/reissue/",
        lesson_views.group_cards_reissue,
        name="group_cards_reissue",
    ),
    path("classes/<int:pk>/sign-in/open/", lesson_views.sign_in_open, name="sign_in_open"),
    path("classes/<int:pk>/sign-in/close/", lesson_views.sign_in_close, name="sign_in_close"),
    path("classes/<int:pk>/lesson/roster/", lesson_views.lesson_roster_part, name="roster"),
    path("classes/<int:pk>/board/", board_views.lesson_board, name="board"),
    path(
        "classes/<int:pk>/lesson/sessions/<int:session_pk>/end/",
        lesson_views.card_session_stop,
        name="session_end",
    ),
    path("learners/<int:pk>/card/", lesson_views.learner_card, name="learner_card"),
    path(
        "learners/<int:pk>/card/reissue/",
        lesson_views.learner_card_reissue,
        name="learner_card_reissue",
    ),
]
