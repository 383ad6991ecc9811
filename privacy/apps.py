from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class PrivacyConfig(AppConfig):
    """A learner's personal data: a full export, and a local erasure that keeps counts."""

    name = "privacy"
    verbose_name = gettext_lazy("Personal data")
