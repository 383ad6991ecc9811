from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"
    verbose_name = "Cohort dashboard"

    def ready(self) -> None:
        from assessments.signals import result_stored
        from dashboard.cohort import refresh_on_result_stored

        result_stored.connect(refresh_on_result_stored, dispatch_uid="dashboard.cohort_refresh")
