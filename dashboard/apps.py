from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DashboardConfig(AppConfig):
    name = "dashboard"
    verbose_name = _("Cohort dashboard")

    def ready(self) -> None:
        from assessments.signals import result_stored
        from dashboard.cohort import refresh_on_level_changed, refresh_on_result_stored
        from learners.signals import learner_level_changed

        result_stored.connect(refresh_on_result_stored, dispatch_uid="dashboard.cohort_refresh")
        learner_level_changed.connect(
            refresh_on_level_changed, dispatch_uid="dashboard.cohort_refresh_level"
        )
