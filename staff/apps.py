from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class StaffConfig(AppConfig):
    name = "staff"
    verbose_name = gettext_lazy("Staff accounts and settings pages")
