from django.urls import include, path

from imports import views

app_name = "imports"

# One import's pages, under /learners/import/ beside the learner list that links to them.
job_patterns = [
    path("", views.import_upload, name="upload"),
    path("template.csv", views.import_template, name="template"),
    path("<int:pk>/", views.import_job, name="job"),
    path("<int:pk>/progress.json", views.import_progress_json, name="progress"),
    path("<int:pk>/confirm/", views.import_confirm, name="confirm"),
    path("<int:pk>/discard/", views.import_discard, name="discard"),
    path("<int:pk>/results.csv", views.import_results, name="results"),
    path("<int:pk>/passwords.csv", views.import_credentials, name="credentials"),
]

# Mounted under /learners/.
urlpatterns = [
    path("imports/", views.import_list, name="list"),
    path("import/", include(job_patterns)),
]
