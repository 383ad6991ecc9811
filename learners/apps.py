from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class LearnersConfig(AppConfig):
    name = "learners"
    verbose_name = gettext_lazy("Learners")

    def ready(self) -> None:
        from accounts.user_cache import forget_user_when_changed
        from learners.models import Learner

        # A learner's status (erased, say) is checked on every request, on the cached user.
        forget_user_when_changed(Learner)
