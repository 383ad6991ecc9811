from django.urls import path

from learners import views

app_name = "learners"

urlpatterns = [
    path("", views.learner_index, name="list"),
    path("new/", views.learner_new, name="new"),
    path("<int:pk>/", views.learner_detail, name="detail"),
    path("<int:pk>/attempts/<int:assessment_id>/", views.attempt_results, name="attempt"),
]
