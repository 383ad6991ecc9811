from django.urls import path

from assessments import taking_views, views

app_name = "assessments"

urlpatterns = [
    path("", views.my_assessments, name="my_assessments"),
    path("start/", views.start, name="start"),
    path("assessments/<int:assessment_id>/", taking_views.take, name="take"),
    path(
        "assessments/<int:assessment_id>/page/<int:number>/",
        taking_views.question_page,
        name="page",
    ),
    path("assessments/<int:assessment_id>/answers/", taking_views.save_answer, name="save_answer"),
    path("session/", views.keep_alive, name="keep_alive"),
    path("assessments/<int:assessment_id>/check/", taking_views.check_answers, name="check"),
    path("assessments/<int:assessment_id>/submit/", taking_views.submit, name="submit"),
    path("assessments/<int:assessment_id>/results/", views.results, name="results"),
    path("assessments/<int:assessment_id>/status/", views.attempt_status, name="status"),
    path("assessments/<int:assessment_id>/resend/", views.resend, name="resend"),
    path("assessments/<int:assessment_id>/refresh/", views.refresh, name="refresh"),
]
