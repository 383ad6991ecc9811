from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PartnerApiConfig(AppConfig):
    name = "partner_api"
    verbose_name = _("Assessment service")

    def ready(self) -> None:
        from django.conf import settings

        from partner_api.calls import add_call_listener, add_circuit_listener
        from partner_api.resilience import set_circuit_store
        from partner_api.upstream import (
            CacheCircuitStore,
            publish_circuit_change,
            record_failed_call,
        )

        # Failed upstream calls are kept for the operations page, and an opened circuit is
        # published so every process (web and worker) shows the same banner.
        add_call_listener(record_failed_call)
        add_circuit_listener(publish_circuit_change)
        # With a shared cache (Redis), one process's open circuit makes every process fail
        # fast until its cool-down ends; with the local-memory cache each decides alone.
        if settings.CACHE_IS_SHARED:
            set_circuit_store(CacheCircuitStore())
