from django.urls import path

from assessments import staff_views

# Mounted at /operations/; the names carry no namespace, as they always have.
urlpatterns = [
    path("", staff_views.operations, name="operations"),
    path(
        "attempts/<int:attempt_pk>/retry/",
        staff_views.retry_attempt,
        name="operations_retry",
    ),
]
