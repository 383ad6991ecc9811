from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save
from django.utils.translation import gettext_lazy


def _settings_changed(instance, **kwargs) -> None:
    from kit.row_cache import forget_row
    from schools.models import settings_key

    forget_row(settings_key(instance.school_id))


def _schools_changed(**kwargs) -> None:
    from kit.row_cache import forget_row
    from schools.models import SCHOOLS_KEY, forget_schools_memo

    forget_row(SCHOOLS_KEY)
    forget_schools_memo()


class SchoolsConfig(AppConfig):
    name = "schools"
    verbose_name = gettext_lazy("School settings")

    def ready(self) -> None:
        from django.core.signals import request_finished, request_started

        from schools.models import PartnerSettings, School, forget_schools_memo

        request_started.connect(forget_schools_memo, dispatch_uid="schools.memo.started")
        request_finished.connect(forget_schools_memo, dispatch_uid="schools.memo.finished")

        # The settings are read on many pages (PartnerSettings.current): a change shows at once.
        post_save.connect(_settings_changed, sender=PartnerSettings, dispatch_uid="schools.saved")
        post_delete.connect(
            _settings_changed, sender=PartnerSettings, dispatch_uid="schools.deleted"
        )
        post_save.connect(_schools_changed, sender=School, dispatch_uid="schools.school.saved")
        post_delete.connect(_schools_changed, sender=School, dispatch_uid="schools.school.deleted")
