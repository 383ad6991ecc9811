"""Follow-up items: from a needs-help flag in a learner's results to a person who acts on it."""

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext, gettext_lazy

from assessments.models import AssessmentAttempt
from learners.models import Learner
from schools.models import default_school_id

# Open means not resolved (the queue's default); kept in one place for the partial indexes.
OPEN = ~models.Q(status="resolved")


class FollowUp(models.Model):
    """One completed attempt whose results flag at least one focus area as needing help."""

    class Status(models.TextChoices):
        NEW = "new", gettext_lazy("New")
        CONTACTED = "contacted", gettext_lazy("Contacted")
        REFERRED = "referred", gettext_lazy("Referred")
        RESOLVED = "resolved", gettext_lazy("Resolved")

    class Source(models.TextChoices):
        RESULT = "result", gettext_lazy("Results")
        ASKED = "asked", gettext_lazy("The learner asked to talk to someone")

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="follow_ups")
    # The school this belongs to: every page, list and export is scoped by it.
    school = models.ForeignKey(
        "schools.School", on_delete=models.PROTECT, default=default_school_id, related_name="+"
    )
    # One item per completed attempt: the database makes opening it idempotent. Empty when the
    # learner asked for help from a page ("I want to talk to someone").
    attempt = models.OneToOneField(
        AssessmentAttempt,
        on_delete=models.CASCADE,
        related_name="follow_up",
        null=True,
        blank=True,
    )
    source = models.CharField(max_length=8, choices=Source.choices, default=Source.RESULT)
    # A priority value in the results, or a learner asking: a safeguarding alert went out, and
    # the item sorts before every other.
    priority = models.BooleanField(gettext_lazy("priority"), default=False)
    # Copied from the result so the queue sorts and filters without joining the results.
    risk_level = models.CharField(max_length=200)
    risk_rank = models.PositiveSmallIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.NEW)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="assigned_follow_ups",
    )
    due_date = models.DateField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # When it was last resolved (empty while open): a routine item keeps the learner's records
    # for the school's retention period from then (privacy.selectors).
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-priority", "due_date", "id"]
        # The queue shows open items unless asked otherwise: partial indexes over open items
        # give each of its sorts rows in order, so a page reads 25 index entries, not every
        # open item. A chosen status, assignee or risk level leads its own index.
        indexes = [
            models.Index(
                fields=["-priority", "due_date", "id"], condition=OPEN, name="follow_up_open_due"
            ),
            models.Index(
                fields=["-priority", "-created_at", "-id"],
                condition=OPEN,
                name="follow_up_open_newest",
            ),
            models.Index(
                fields=["-priority", "-risk_rank", "risk_level", "due_date", "id"],
                condition=OPEN,
                name="follow_up_open_risk",
            ),
            # A school's open items when there are several schools: its own entries only,
            # due first (the other sorts sort the school's few hundred).
            models.Index(
                fields=["school", "-priority", "due_date", "id"],
                condition=OPEN,
                name="follow_up_school_open_due",
            ),
            models.Index(fields=["status", "due_date"]),
            models.Index(fields=["assignee", "status", "due_date"]),
            models.Index(fields=["risk_level", "status"]),
        ]

    def __str__(self) -> str:
        return gettext("Follow-up #%(pk)s of %(learner)s") % {
            "pk": self.pk,
            "learner": self.learner,
        }

    @property
    def is_open(self) -> bool:
        return self.status != self.Status.RESOLVED

    @property
    def is_overdue(self) -> bool:
        """Return whether the item is still open after its due date."""
        return self.is_open and self.due_date < timezone.localdate()


class FollowUpArea(models.Model):
    """A focus area that needed help in the item's results, indexed for the queue's filter."""

    follow_up = models.ForeignKey(FollowUp, on_delete=models.CASCADE, related_name="areas")
    name = models.CharField(max_length=200)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["follow_up", "name"], name="one_row_per_area")
        ]
        indexes = [models.Index(fields=["name", "follow_up"])]

    def __str__(self) -> str:
        return self.name


class FollowUpNote(models.Model):
    """A dated note by a staff member; notes are added, never edited, so the history stays."""

    follow_up = models.ForeignKey(FollowUp, on_delete=models.CASCADE, related_name="notes")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Kept as text too, so the note still says who wrote it if the account goes.
    author_username = models.CharField(max_length=150)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return gettext("Note by %(author)s on %(date)s") % {
            "author": self.author_username,
            "date": date_format(timezone.localtime(self.created_at), "SHORT_DATE_FORMAT"),
        }


class FollowUpHistory(models.Model):
    """One change staff made to an item (status, assignee, due date), kept for the chronology."""

    follow_up = models.ForeignKey(FollowUp, on_delete=models.CASCADE, related_name="history")
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Kept as text too, so the history still says who it was if the account goes.
    changed_by_name = models.CharField(max_length=150)
    # [{"field": "status", "from": "New", "to": "Contacted"}, ...] in the words staff saw.
    changes = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "follow-up history"

    def __str__(self) -> str:
        return gettext("Change to follow-up #%(pk)s") % {"pk": self.follow_up_id}
