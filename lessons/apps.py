from django.apps import AppConfig


class LessonsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "lessons"
    verbose_name = "Lessons and sign-in cards"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_out

        from lessons.signals import card_session_signed_out

        user_logged_out.connect(card_session_signed_out, dispatch_uid="lessons.signed_out")
