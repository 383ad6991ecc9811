"""Answer pictures: an upstream `Icon` given by address, fetched once and kept by the portal."""

from django.db import models
from django.utils.translation import gettext_lazy


class Picture(models.Model):
    """One icon address: fetched in the background, checked by decoding, served from here."""

    class State(models.TextChoices):
        PENDING = "pending", gettext_lazy("Waiting to be fetched")
        READY = "ready", gettext_lazy("Ready")
        FAILED = "failed", gettext_lazy("Failed; tried again later")

    # The address exactly as the upstream gave it; its SHA-256 is the unique key (an address
    # may be longer than an index allows).
    address = models.TextField()
    address_hash = models.CharField(max_length=64, unique=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    # What is served: the picture as the portal re-encoded it (never the upstream's bytes).
    image = models.BinaryField(blank=True, default=b"")
    content_type = models.CharField(max_length=40, blank=True)
    width = models.PositiveIntegerField(null=True, blank=True)
    height = models.PositiveIntegerField(null=True, blank=True)
    # SHA-256 of `image`: the served address, so a browser may keep it for a year.
    digest = models.CharField(max_length=64, blank=True, db_index=True)
    tries = models.PositiveIntegerField(default=0)
    next_try_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    fetched_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["state", "next_try_at"])]

    def __str__(self) -> str:
        return self.address
