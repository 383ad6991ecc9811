from django.urls import path

from privacy import views

app_name = "privacy"

# Mounted under /learners/: these pages act on one learner's record.
urlpatterns = [
    path("<int:pk>/export/", views.learner_export_download, name="export"),
    path("<int:pk>/erase/", views.learner_erase_confirm, name="erase"),
    path("<int:pk>/hold/", views.records_hold_change, name="hold"),
]
