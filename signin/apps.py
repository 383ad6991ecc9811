from django.apps import AppConfig


class SigninConfig(AppConfig):
    """Signing in with a school's account, and the second factor staff give."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "signin"

    def ready(self) -> None:
        from signin import checks  # noqa: F401 (registers the system checks)
