from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PortalConfig(AppConfig):
    name = "portal"
    verbose_name = _("Partner portal")

    def ready(self) -> None:
        from django.conf import settings

        from portal import metrics
        from portal.partner_api import add_call_listener, add_circuit_listener, set_circuit_store
        from portal.upstream import CacheCircuitStore, publish_circuit_change, record_failed_call
        from portal.user_cache import connect_user_cache_signals

        # Failed upstream calls are kept for the operations page, and an opened circuit is
        # published so every process (web and worker) shows the same banner.
        add_call_listener(record_failed_call)
        add_circuit_listener(publish_circuit_change)
        # Every call attempt is counted on /metrics (importing metrics also connects its
        # sign-in counters).
        add_call_listener(metrics.observe_upstream_call)
        # With a shared cache (Redis), one process's open circuit makes every process fail
        # fast until its cool-down ends; with the local-memory cache each decides alone.
        if settings.CACHE_IS_SHARED:
            set_circuit_store(CacheCircuitStore())
        # The signed-in user kept in the shared cache is dropped when the account changes.
        connect_user_cache_signals()
