from django.apps import AppConfig


class PicturesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "pictures"
    verbose_name = "Answer pictures"
