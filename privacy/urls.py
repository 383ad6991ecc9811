from django.urls import path

from privacy import views

app_name = "privacy"

urlpatterns = [
    # The learner's own page.
    path("me/privacy/", views.my_privacy, name="my_privacy"),
    # Staff pages acting on one learner's record.
    path("learners/<int:pk>/export/", views.learner_export_download, name="export"),
    path("learners/<int:pk>/erase/", views.learner_erase_confirm, name="erase"),
    path("learners/<int:pk>/hold/", views.records_hold_change, name="hold"),
]
