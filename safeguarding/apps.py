from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SafeguardingConfig(AppConfig):
    name = "safeguarding"
    verbose_name = _("Safeguarding alerts")

    def ready(self) -> None:
        from accounts.signals import safeguarding_role_granted
        from assessments.signals import result_stored
        from safeguarding.receivers import (
            raise_alert_on_result_stored,
            send_test_alert_on_role_granted,
        )

        result_stored.connect(
            raise_alert_on_result_stored, dispatch_uid="safeguarding.raise_on_result_stored"
        )
        safeguarding_role_granted.connect(
            send_test_alert_on_role_granted, dispatch_uid="safeguarding.test_alert_on_granted"
        )
