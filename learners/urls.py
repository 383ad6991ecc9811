from django.urls import path

from learners import account_views, export_views, import_views, views

app_name = "learners"

urlpatterns = [
    path("", views.learner_index, name="list"),
    path("new/", views.learner_new, name="new"),
    path("learners.csv", export_views.learners_csv, name="csv_learners"),
    path("import/", import_views.import_upload, name="import"),
    path("import/template.csv", import_views.import_template, name="import_template"),
    path("import/<int:pk>/", import_views.import_job, name="import_job"),
    path(
        "import/<int:pk>/progress.json", import_views.import_progress_json, name="import_progress"
    ),
    path("import/<int:pk>/confirm/", import_views.import_confirm, name="import_confirm"),
    path("import/<int:pk>/discard/", import_views.import_discard, name="import_discard"),
    path("import/<int:pk>/results.csv", import_views.import_results, name="import_results"),
    path(
        "import/<int:pk>/passwords.csv",
        import_views.import_credentials,
        name="import_credentials",
    ),
    path("<int:pk>/", views.learner_detail, name="detail"),
    path("<int:pk>/attempts/<int:assessment_id>/", views.attempt_results, name="attempt"),
    path("<int:pk>/password/", account_views.learner_password, name="password_reset"),
]
