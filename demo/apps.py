from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DemoConfig(AppConfig):
    """Demo and scale tools: the seeded demo cohort, the 100k generator, page timing."""

    name = "demo"
    verbose_name = _("Demo and scale tools")
