from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class RosterConfig(AppConfig):
    """The school's records (OneRoster CSV): pupils, classes and teachers kept in step."""

    name = "roster"
    verbose_name = gettext_lazy("Roster sync")
