from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class OpsConfig(AppConfig):
    name = "ops"
    verbose_name = _("Operations")

    def ready(self) -> None:
        from ops import metrics
        from partner_api import add_call_listener

        # Every call attempt is counted on /metrics (importing metrics also connects its
        # sign-in counters).
        add_call_listener(metrics.observe_upstream_call)
