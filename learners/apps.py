from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class LearnersConfig(AppConfig):
    name = "learners"
    verbose_name = gettext_lazy("Learners")

    def ready(self) -> None:
        from learners.contacts import connect_contact_signals
        from learners.models import Learner
        from portal.user_cache import forget_user_when_changed

        # A learner's status (erased, say) is checked on every request, on the cached user.
        forget_user_when_changed(Learner)
        # The school contacts a learner's results page shows follow their groups.
        connect_contact_signals()
