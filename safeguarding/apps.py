from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SafeguardingConfig(AppConfig):
    name = "safeguarding"
    verbose_name = _("Safeguarding alerts")
