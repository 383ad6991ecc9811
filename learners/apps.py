from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class LearnersConfig(AppConfig):
    name = "learners"
    verbose_name = gettext_lazy("Learners")
