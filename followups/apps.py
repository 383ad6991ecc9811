from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class FollowupsConfig(AppConfig):
    name = "followups"
    verbose_name = _("Follow-ups")

    def ready(self) -> None:
        from assessments.signals import result_stored
        from followups.receivers import open_follow_up_on_result_stored

        result_stored.connect(
            open_follow_up_on_result_stored, dispatch_uid="followups.open_on_result_stored"
        )
