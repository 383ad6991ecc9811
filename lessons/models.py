"""Sign-in cards, the windows in which a group may use them, and the sessions cards start."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy

from schools.models import default_school_id


class SignInCard(models.Model):
    """A learner's printed card: a QR secret and a typed code, kept encrypted to reprint."""

    # The school this belongs to: every page, list and export is scoped by it.
    school = models.ForeignKey(
        "schools.School", on_delete=models.PROTECT, default=default_school_id, related_name="+"
    )
    # By name, as elsewhere: the learners app sits below this one.
    learner = models.ForeignKey(
        "learners.Learner", on_delete=models.CASCADE, related_name="sign_in_cards"
    )
    # Keyed digests (kit.encryption.keyed_digest) find a card in one indexed lookup without
    # password hashing; the encrypted copies let the same card be printed again.
    secret_digest = models.CharField(max_length=64, unique=True, editable=False)
    code_digest = models.CharField(max_length=64, unique=True, editable=False)
    secret_encrypted = models.TextField(editable=False)
    code_encrypted = models.TextField(editable=False)
    issued_at = models.DateTimeField(default=timezone.now)
    issued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    voided_at = models.DateTimeField(null=True, blank=True)
    voided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["learner"],
                condition=Q(voided_at__isnull=True),
                name="one_current_card_per_learner",
            )
        ]

    def __str__(self) -> str:
        state = "void" if self.voided_at else "current"
        return f"Card {self.pk} of learner {self.learner_id} ({state})"


class SignInWindowQuerySet(models.QuerySet):
    def open(self) -> "SignInWindowQuerySet":
        """Return the windows open now: not closed, and not yet at their end."""
        return self.filter(closed_at__isnull=True, closes_at__gt=timezone.now())


class SignInWindow(models.Model):
    """A time, opened by staff for one group, in which its learners may sign in with cards."""

    # The school this belongs to: every page, list and export is scoped by it.
    school = models.ForeignKey(
        "schools.School", on_delete=models.PROTECT, default=default_school_id, related_name="+"
    )
    group = models.ForeignKey(
        "classes.SchoolGroup", on_delete=models.CASCADE, related_name="sign_in_windows"
    )
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    opened_at = models.DateTimeField(default=timezone.now)
    closes_at = models.DateTimeField()
    # The minutes last chosen (opening or keeping open): the class page offers them again.
    # Empty for windows opened before it was kept.
    minutes = models.PositiveSmallIntegerField(null=True, blank=True)
    # Set when staff close it, or (to closes_at) when it is found to have run out.
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    objects = SignInWindowQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["group"],
                condition=Q(closed_at__isnull=True),
                name="one_unclosed_window_per_group",
            )
        ]

    def __str__(self) -> str:
        return f"Sign-in window {self.pk} of group {self.group_id}"

    @property
    def is_open(self) -> bool:
        return self.closed_at is None and self.closes_at > timezone.now()


class CardSession(models.Model):
    """A session a card started: at most one live per card, ended with its window."""

    class EndReason(models.TextChoices):
        WINDOW_CLOSED = "window_closed", gettext_lazy("Sign-in closed")
        ENDED_BY_STAFF = "ended_by_staff", gettext_lazy("Ended by staff")
        REPLACED = "replaced", gettext_lazy("Another pupil signed in on the device")
        SIGNED_OUT = "signed_out", gettext_lazy("Signed out")
        CARD_VOIDED = "card_voided", gettext_lazy("Card voided")

    card = models.ForeignKey(SignInCard, on_delete=models.CASCADE, related_name="sessions")
    learner = models.ForeignKey(
        "learners.Learner", on_delete=models.CASCADE, related_name="card_sessions"
    )
    window = models.ForeignKey(SignInWindow, on_delete=models.CASCADE, related_name="sessions")
    session_key = models.CharField(max_length=40, blank=True, editable=False)
    # A short description ("Chrome on an Android phone"), never the address.
    device = models.CharField(max_length=80, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    ended_at = models.DateTimeField(null=True, blank=True)
    end_reason = models.CharField(max_length=20, choices=EndReason.choices, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["card"],
                condition=Q(ended_at__isnull=True),
                name="one_live_session_per_card",
            )
        ]

    def __str__(self) -> str:
        return f"Card session {self.pk} of learner {self.learner_id}"


class CardRefusal(models.Model):
    """A card used while its session was live elsewhere: refused, and shown to the teacher."""

    card = models.ForeignKey(SignInCard, on_delete=models.CASCADE, related_name="refusals")
    learner = models.ForeignKey("learners.Learner", on_delete=models.CASCADE, related_name="+")
    window = models.ForeignKey(SignInWindow, on_delete=models.CASCADE, related_name="refusals")
    device = models.CharField(max_length=80, blank=True)
    at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"Refused card use {self.pk} of learner {self.learner_id}"
