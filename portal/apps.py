from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PortalConfig(AppConfig):
    name = "portal"
    verbose_name = _("Partner portal")

    def ready(self) -> None:
        from portal import metrics
        from portal.partner_api import add_call_listener, add_circuit_listener
        from portal.upstream import publish_circuit_change, record_failed_call

        # Failed upstream calls are kept for the operations page, and an opened circuit is
        # published so every process (web and worker) shows the same banner.
        add_call_listener(record_failed_call)
        add_circuit_listener(publish_circuit_change)
        # Every call attempt is counted on /metrics (importing metrics also connects its
        # sign-in counters).
        add_call_listener(metrics.observe_upstream_call)
