from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save
from django.utils.translation import gettext_lazy


def _settings_changed(**kwargs) -> None:
    from kit.row_cache import forget_row
    from schools.models import PARTNER_SETTINGS_KEY

    forget_row(PARTNER_SETTINGS_KEY)


class SchoolsConfig(AppConfig):
    name = "schools"
    verbose_name = gettext_lazy("School settings")

    def ready(self) -> None:
        from schools.models import PartnerSettings

        # The settings are read on many pages (PartnerSettings.current): a change shows at once.
        post_save.connect(_settings_changed, sender=PartnerSettings, dispatch_uid="schools.saved")
        post_delete.connect(
            _settings_changed, sender=PartnerSettings, dispatch_uid="schools.deleted"
        )
