"""Safeguarding alerts: a result or a learner's request that a named adult must act on."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext, gettext_lazy

from schools.models import default_school_id

# Not yet acknowledged: the banner's and the escalation sweep's rows.
UNACKNOWLEDGED = models.Q(acknowledged_at__isnull=True)


class Alert(models.Model):
    """One thing the safeguarding leads must look at, from raising to acknowledgement."""

    class Kind(models.TextChoices):
        RESULT = "result", gettext_lazy("A result needs review")
        ASKED = "asked", gettext_lazy("A learner asked to talk to someone")
        TEST = "test", gettext_lazy("Test alert")

    class Reason(models.TextChoices):
        PRIORITY = "priority", gettext_lazy("Priority value")
        UNRECOGNISED = "unrecognised", gettext_lazy("Unrecognised value: review")
        ASKED = "asked", gettext_lazy("The learner asked")
        TEST = "test", gettext_lazy("Checking the alert reaches you")

    kind = models.CharField(max_length=8, choices=Kind.choices)
    reason = models.CharField(max_length=16, choices=Reason.choices)
    # The school this belongs to: every page, list and export is scoped by it.
    school = models.ForeignKey(
        "schools.School", on_delete=models.PROTECT, default=default_school_id, related_name="+"
    )
    # By name: the learners app sits below this one, but the model reads better this way.
    learner = models.ForeignKey(
        "learners.Learner",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="safeguarding_alerts",
    )
    # One alert per result: a retried delivery or a racing worker finds the first one.
    attempt = models.OneToOneField(
        "assessments.AssessmentAttempt",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="safeguarding_alert",
    )
    follow_up = models.ForeignKey(
        "followups.FollowUp",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="safeguarding_alerts",
    )
    # Which values raised it ({"field": "needs_help" | "risk_level", "value": ...}): shown to
    # the safeguarding leads once signed in, never put in an email.
    values = models.JSONField(default=list, blank=True)
    # A test alert is sent to the member of staff who was just given the role.
    test_recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    raised_at = models.DateTimeField()
    # When it escalates if nobody has acknowledged it (counted in school hours).
    escalate_at = models.DateTimeField()
    escalated_at = models.DateTimeField(null=True, blank=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    # Kept as text too, so the record still says who it was if the account goes.
    acknowledged_by_username = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["-raised_at", "-id"]
        indexes = [
            models.Index(
                fields=["escalate_at"], condition=UNACKNOWLEDGED, name="alert_unacknowledged"
            ),
            models.Index(fields=["raised_at"], name="alert_raised_at"),
        ]

    def __str__(self) -> str:
        return gettext("Alert #%(pk)s: %(kind)s") % {"pk": self.pk, "kind": self.get_kind_display()}

    @property
    def is_acknowledged(self) -> bool:
        return self.acknowledged_at is not None


class AlertEmail(models.Model):
    """One email about an alert: sent exactly once, whoever tries and however often."""

    class Purpose(models.TextChoices):
        RAISED = "raised", gettext_lazy("Raised")
        ESCALATED = "escalated", gettext_lazy("Escalated")

    class State(models.TextChoices):
        WAITING = "waiting", gettext_lazy("Waiting to be sent")
        SENDING = "sending", gettext_lazy("Being sent")
        SENT = "sent", gettext_lazy("Sent")
        FAILED = "failed", gettext_lazy("Could not be sent")
        SKIPPED = "skipped", gettext_lazy("Not needed: acknowledged first")

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="emails")
    purpose = models.CharField(max_length=10, choices=Purpose.choices)
    # Who it went to (or was last tried with): worked out again on every try, from the roles.
    recipients = models.JSONField(default=list, blank=True)
    state = models.CharField(max_length=8, choices=State.choices, default=State.WAITING)
    tries = models.PositiveSmallIntegerField(default=0)
    # A sender holds the email until then; a sender that died leaves it to the next after.
    claimed_until = models.DateTimeField(null=True, blank=True)
    next_try_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["alert", "purpose"], name="one_email_per_purpose")
        ]
        indexes = [models.Index(fields=["state", "next_try_at"])]

    def __str__(self) -> str:
        return f"{self.alert} {self.purpose}: {self.state}"
