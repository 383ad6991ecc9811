"""Read aloud: audio the portal made itself for a text, where a browser has no voice."""

from django.db import models
from django.utils.translation import gettext_lazy


class Recording(models.Model):
    """One text spoken in one language, made once in the background and served from here."""

    class State(models.TextChoices):
        PENDING = "pending", gettext_lazy("Waiting to be made")
        READY = "ready", gettext_lazy("Ready")
        FAILED = "failed", gettext_lazy("Failed; tried again later")

    text = models.TextField()
    language = models.CharField(max_length=20)
    # SHA-256 of the language and the text: the unique key (a text may be long).
    text_hash = models.CharField(max_length=64, unique=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    audio = models.BinaryField(blank=True, default=b"")
    content_type = models.CharField(max_length=40, blank=True)
    # SHA-256 of `audio`: the served address, so a browser may keep it for a year.
    digest = models.CharField(max_length=64, blank=True, db_index=True)
    tries = models.PositiveIntegerField(default=0)
    next_try_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    made_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["state", "next_try_at"])]

    def __str__(self) -> str:
        return f"{self.language}: {self.text[:60]}"
