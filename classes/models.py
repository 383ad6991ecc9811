"""Classes: teaching classes, tutor and year groups, who is in them and who teaches them."""

from datetime import date

from django.apps import apps
from django.conf import settings
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone
from django.utils.translation import gettext_lazy

from partner_api.levels import Level
from schools.models import default_school_id


def learner_model():
    """Return the Learner model, named, not imported: the learners app sits above classes."""
    return apps.get_model("learners", "Learner")


def current_academic_year(today: date | None = None) -> str:
    """Return the school year a date falls in, as "2026/27" (years start in September)."""
    today = today or timezone.localdate()
    start = today.year if today.month >= 9 else today.year - 1
    return f"{start}/{(start + 1) % 100:02d}"


class SchoolGroupQuerySet(models.QuerySet):
    """Groups, this year's apart from the archived ones."""

    def current(self) -> "SchoolGroupQuerySet":
        """Return the groups not archived: the only ones offered in menus and changed."""
        return self.filter(archived_at__isnull=True)

    def archived(self) -> "SchoolGroupQuerySet":
        """Return last years' groups: read-only, kept for their history."""
        return self.filter(archived_at__isnull=False)


class SchoolGroup(models.Model):
    """A teaching class, tutor group or year group: the learners its staff look after."""

    class Kind(models.TextChoices):
        TEACHING_CLASS = "class", gettext_lazy("Teaching class")
        TUTOR_GROUP = "tutor", gettext_lazy("Tutor group")
        YEAR_GROUP = "year", gettext_lazy("Year group")

    # The school this belongs to: every page, list and export is scoped by it.
    school = models.ForeignKey(
        "schools.School", on_delete=models.PROTECT, default=default_school_id, related_name="+"
    )
    name = models.CharField(gettext_lazy("name"), max_length=100)
    kind = models.CharField(
        gettext_lazy("kind"), max_length=8, choices=Kind.choices, default=Kind.TEACHING_CLASS
    )
    # Empty only for a group made by `add_staff` before anyone set its level.
    level = models.CharField(
        gettext_lazy("level"), max_length=32, choices=Level.choices, blank=True
    )
    academic_year = models.CharField(
        gettext_lazy("academic year"), max_length=7, default=current_academic_year
    )
    staff = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="GroupStaff", related_name="school_groups", blank=True
    )
    # Shown on its pupils' results page; empty means the partner's school contact.
    contact = models.CharField(
        gettext_lazy("who to talk to"),
        max_length=200,
        blank=True,
        help_text=gettext_lazy("Shown to this group's pupils with their results."),
    )
    # Last year's class once a new academic year came (roster sync): read-only, history kept,
    # not offered in menus.
    archived_at = models.DateTimeField(gettext_lazy("archived at"), null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = SchoolGroupQuerySet.as_manager()

    class Meta:
        db_table = "learners_schoolgroup"  # the table it had before it moved here
        ordering = ["-academic_year", "name", "id"]
        constraints = [
            # "7B" and "7b" in one year of a school would be two groups nobody can tell apart;
            # two schools of a trust may each have their own 7B.
            models.UniqueConstraint(
                "school",
                Lower("name"),
                "academic_year",
                name="school_group_unique_name_per_school_year",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.academic_year})"

    @property
    def is_archived(self) -> bool:
        """Return whether this is last year's group: read-only, history kept."""
        return self.archived_at is not None


class GroupStaff(models.Model):
    """A member of staff who works with a group, and so sees its learners."""

    group = models.ForeignKey(SchoolGroup, on_delete=models.CASCADE, related_name="staff_links")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="group_links"
    )
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "learners_groupstaff"  # the table it had before it moved here
        constraints = [
            models.UniqueConstraint(fields=["group", "user"], name="group_staff_once"),
        ]

    def __str__(self) -> str:
        return f"{self.user} works with {self.group}"


class GroupMembership(models.Model):
    """A learner's time in a group: history is kept, the current one has no `left_at`."""

    group = models.ForeignKey(SchoolGroup, on_delete=models.CASCADE, related_name="memberships")
    learner = models.ForeignKey(
        "learners.Learner", on_delete=models.CASCADE, related_name="group_memberships"
    )
    joined_at = models.DateTimeField(default=timezone.now)
    left_at = models.DateTimeField(null=True, blank=True)
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    removed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        db_table = "learners_groupmembership"  # the table it had before it moved here
        ordering = ["-joined_at", "-id"]
        constraints = [
            # One current membership per learner and group: joining twice is a no-op. Also
            # the index of "whose learners a member of staff sees" (learners.access).
            models.UniqueConstraint(
                fields=["group", "learner"],
                condition=models.Q(left_at__isnull=True),
                name="group_membership_current_once",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.learner} in {self.group}"

    @property
    def is_current(self) -> bool:
        """Return whether the learner is in the group now."""
        return self.left_at is None
