from django.apps import AppConfig


class PortalConfig(AppConfig):
    name = "portal"
    verbose_name = "Partner portal"

    def ready(self) -> None:
        from portal.partner_api import add_call_listener
        from portal.upstream import record_failed_call

        # Failed upstream calls are kept for the operations page.
        add_call_listener(record_failed_call)
