from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class ClassesConfig(AppConfig):
    name = "classes"
    verbose_name = gettext_lazy("Classes")

    def ready(self) -> None:
        from classes.contacts import connect_contact_signals

        # The school contacts a learner's results page shows follow their groups.
        connect_contact_signals()
