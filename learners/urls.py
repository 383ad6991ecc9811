from django.urls import path

from learners import account_views, privacy_views, views

app_name = "learners"

urlpatterns = [
    path("", views.learner_index, name="list"),
    path("new/", views.learner_new, name="new"),
    path("<int:pk>/", views.learner_detail, name="detail"),
    path("<int:pk>/attempts/<int:assessment_id>/", views.attempt_results, name="attempt"),
    path("<int:pk>/password/", account_views.learner_password, name="password_reset"),
    path("<int:pk>/export/", privacy_views.learner_export_download, name="export"),
    path("<int:pk>/erase/", privacy_views.learner_erase_confirm, name="erase"),
]
