"""The Learner record: a local sign-in account tied to an upstream learner."""

from django.conf import settings
from django.db import models


class Level(models.TextChoices):
    """The spec's level codes, passed upstream as the `level` query parameter."""

    FURTHER_EDUCATION = "LOA_PARTNER_LEVEL1", "Further education"
    SECONDARY = "LOA_PARTNER_LEVEL2", "Secondary"
    PRIMARY = "LOA_PARTNER_LEVEL3", "Primary"


class Learner(models.Model):
    """A learner registered upstream under the partner's subscription."""

    class Status(models.TextChoices):
        # A learner is saved locally before the upstream call and becomes active once the
        # upstream has returned a user_id; a failed call removes it again.
        PENDING = "pending", "Registration pending"
        ACTIVE = "active", "Active"
        # Personal data erased (learners.privacy): an anonymous record kept for counts.
        ERASED = "erased", "Personal data erased"

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="learner"
    )
    upstream_user_id = models.CharField(
        "upstream user id", max_length=200, unique=True, null=True, blank=True
    )
    username = models.CharField(max_length=150, unique=True)
    first_name = models.CharField(max_length=150, blank=True)
    last_name = models.CharField(max_length=150, blank=True)
    email = models.EmailField(blank=True)
    # Required at registration (the form and the upstream insist); empty only once erased.
    dob = models.DateField("date of birth", null=True, blank=True)
    level = models.CharField(max_length=32, choices=Level.choices, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    registered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="registered_learners",
    )
    registered_at = models.DateTimeField(auto_now_add=True)
    erased_at = models.DateTimeField("personal data erased at", null=True, blank=True)

    class Meta:
        ordering = ["-registered_at", "-id"]
        indexes = [
            models.Index(fields=["last_name", "first_name"]),
            models.Index(fields=["level", "registered_at"]),
        ]

    def __str__(self) -> str:
        return self.display_name

    @property
    def display_name(self) -> str:
        """Return the learner's full name, or the username when no name was given."""
        full = f"{self.first_name} {self.last_name}".strip()
        return full or self.username

    @property
    def is_registered(self) -> bool:
        """Return whether the upstream registration completed (not the sign-in account)."""
        return self.status == self.Status.ACTIVE
