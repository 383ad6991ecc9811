from django.urls import path

from learners import export_views, views

app_name = "learners"

urlpatterns = [
    path("", views.learner_index, name="list"),
    path("new/", views.learner_new, name="new"),
    path("learners.csv", export_views.learners_csv, name="csv_learners"),
    path("<int:pk>/", views.learner_detail, name="detail"),
    path("<int:pk>/attempts/<int:assessment_id>/", views.attempt_results, name="attempt"),
    path("<int:pk>/edit/", views.learner_edit, name="edit"),
    path("<int:pk>/password/", views.learner_password, name="password_reset"),
]
