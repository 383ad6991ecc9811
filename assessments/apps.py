from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AssessmentsConfig(AppConfig):
    name = "assessments"
    verbose_name = _("Assessments")

    def ready(self) -> None:
        from assessments.selectors import (
            deliveries_waiting,
            deliveries_waiting_by_school,
            results_waiting,
            results_waiting_by_school,
        )
        from ops.health import register_work_queue

        # On /readyz and /metrics: answers waiting to reach the upstream, and results to fetch.
        register_work_queue(
            "deliveries", deliveries_waiting, by_school=deliveries_waiting_by_school
        )
        register_work_queue("results", results_waiting, by_school=results_waiting_by_school)
