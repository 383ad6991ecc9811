from django.apps import AppConfig


class FollowupsConfig(AppConfig):
    name = "followups"
    verbose_name = "Follow-ups"
