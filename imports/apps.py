from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class ImportsConfig(AppConfig):
    """Bulk registration: learners registered from a CSV file, row by row, resumably."""

    name = "imports"
    verbose_name = gettext_lazy("Bulk registration")

    def ready(self) -> None:
        from imports.selectors import imports_running, imports_running_by_school
        from ops.health import register_work_queue

        # On /readyz and /metrics.
        register_work_queue("imports", imports_running, by_school=imports_running_by_school)
