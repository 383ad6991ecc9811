from django.apps import AppConfig


class SigninConfig(AppConfig):
    """Signing in with a school's account, and the second factor staff give."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "signin"

    def ready(self) -> None:
        from allauth.mfa.signals import authenticator_added

        from signin import checks  # noqa: F401 (registers the system checks)
        from signin.receivers import second_factor_set_up

        authenticator_added.connect(
            second_factor_set_up, dispatch_uid="signin.second_factor_set_up"
        )
