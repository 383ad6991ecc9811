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

    class About(models.TextChoices):
        """What a learner who asked said it is about (the talk page words it for their age)."""

        FEELINGS = "feelings", gettext_lazy("How they are feeling")
        FRIENDS = "friends", gettext_lazy("Friends or other pupils")
        HOME = "home", gettext_lazy("Home or family")
        SCHOOL = "school", gettext_lazy("School work or lessons")
        ONLINE = "online", gettext_lazy("Something online")
        HEALTH = "health", gettext_lazy("Their body or health")
        IN_PERSON = "in_person", gettext_lazy("They would rather say in person")

    class Category(models.TextChoices):
        """The kind of concern, chosen by the lead who takes it on (as CPOMS and MyConcern do)."""

        WELLBEING = "wellbeing", gettext_lazy("Emotional wellbeing or mental health")
        SELF_HARM = "self_harm", gettext_lazy("Self-harm or suicidal thoughts")
        BULLYING = "bullying", gettext_lazy("Bullying or peer-on-peer abuse")
        ONLINE = "online", gettext_lazy("Online safety")
        FAMILY = "family", gettext_lazy("Family circumstances")
        NEGLECT = "neglect", gettext_lazy("Neglect")
        PHYSICAL = "physical", gettext_lazy("Physical abuse")
        EMOTIONAL = "emotional", gettext_lazy("Emotional abuse")
        SEXUAL = "sexual", gettext_lazy("Sexual abuse or exploitation")
        ATTENDANCE = "attendance", gettext_lazy("Attendance or learning")
        OTHER = "other", gettext_lazy("Other")

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
    # A learner's request: "I don't feel safe right now" (escalated at once, sorted first),
    # what it is about and whom they would like to talk to, as the page offered them. Shown to
    # the safeguarding leads once signed in, never put in an email.
    urgent = models.BooleanField(default=False)
    about = models.CharField(max_length=16, choices=About.choices, blank=True)
    wanted_contact = models.CharField(max_length=200, blank=True)
    # Chosen by the lead who acknowledges it; the chronology says what was done.
    category = models.CharField(max_length=16, choices=Category.choices, blank=True)
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


class ChronologyEntry(models.Model):
    """One dated line of a child's safeguarding record: an action taken, or a note.

    Entries are added, never edited once a day old: a correction is a new entry that names
    the one it corrects. Follow-up changes and notes join the same chronology when it is read
    (safeguarding.chronology); alerts give its "raised" and "acknowledged" lines.
    """

    class Kind(models.TextChoices):
        ACTION = "action", gettext_lazy("Action taken")
        NOTE = "note", gettext_lazy("Note")
        CORRECTION = "correction", gettext_lazy("Correction")

    school = models.ForeignKey(
        "schools.School", on_delete=models.PROTECT, default=default_school_id, related_name="+"
    )
    # Gone with the learner's erasure: free text about a child.
    learner = models.ForeignKey(
        "learners.Learner", on_delete=models.CASCADE, related_name="chronology_entries"
    )
    # The concern it belongs to, if any (an entry may stand alone: a lead's own note).
    alert = models.ForeignKey(
        Alert, on_delete=models.SET_NULL, null=True, blank=True, related_name="entries"
    )
    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.ACTION)
    # The action's words as the list offered them when chosen (the school's list may change).
    action = models.CharField(max_length=120, blank=True)
    category = models.CharField(max_length=16, choices=Alert.Category.choices, blank=True)
    text = models.TextField(max_length=4000, blank=True)
    corrects = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="corrections"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Kept as text too, so the record still says who wrote it if the account goes.
    author_name = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set when its author amended it within the first day (the earlier words: its revisions).
    edited_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "chronology entries"
        indexes = [models.Index(fields=["learner", "-created_at"], name="chronology_learner")]

    def __str__(self) -> str:
        return gettext("Chronology entry #%(pk)s") % {"pk": self.pk}


class ChronologyRevision(models.Model):
    """The words an entry held before its author amended them: kept, as a record must be."""

    # Gone with the entry (an erasure): free text about a child.
    entry = models.ForeignKey(ChronologyEntry, on_delete=models.CASCADE, related_name="revisions")
    text = models.TextField(max_length=4000, blank=True)
    replaced_at = models.DateTimeField()

    class Meta:
        ordering = ["replaced_at", "id"]

    def __str__(self) -> str:
        return gettext("Earlier words of chronology entry #%(pk)s") % {"pk": self.entry_id}
