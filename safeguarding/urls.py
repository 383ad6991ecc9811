from django.urls import path

from safeguarding import chronology_views, views

app_name = "safeguarding"

urlpatterns = [
    path("safeguarding/", views.alert_list, name="alerts"),
    path("safeguarding/alerts/<int:pk>/", views.alert_detail, name="alert"),
    path(
        "safeguarding/alerts/<int:pk>/acknowledge/",
        views.alert_acknowledge_view,
        name="acknowledge",
    ),
    path(
        "safeguarding/alerts/<int:pk>/actions/",
        views.alert_add_action,
        name="add_action",
    ),
    path(
        "safeguarding/learners/<int:learner_pk>/",
        chronology_views.chronology,
        name="chronology",
    ),
    path(
        "safeguarding/learners/<int:learner_pk>/print/",
        chronology_views.chronology_print,
        name="chronology_print",
    ),
    path(
        "safeguarding/learners/<int:learner_pk>/notes/",
        chronology_views.chronology_add_note,
        name="add_note",
    ),
    path(
        "safeguarding/entries/<int:pk>/amend/",
        chronology_views.entry_amend_view,
        name="entry_amend",
    ),
    path(
        "safeguarding/entries/<int:pk>/correct/",
        chronology_views.entry_correct_view,
        name="entry_correct",
    ),
    path("me/talk/", views.talk, name="talk"),
]
