"""The Learner record (a local sign-in account tied to an upstream learner) and its groups."""

from datetime import date

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone
from django.utils.translation import gettext_lazy


class Level(models.TextChoices):
    """The spec's level codes, passed upstream as the `level` query parameter."""

    FURTHER_EDUCATION = "LOA_PARTNER_LEVEL1", gettext_lazy("Further education")
    SECONDARY = "LOA_PARTNER_LEVEL2", gettext_lazy("Secondary")
    PRIMARY = "LOA_PARTNER_LEVEL3", gettext_lazy("Primary")


# A learner's details that decide safeguarding (how long records are kept, whether an adult's
# results raise an alert) and what a pupil's pages say: only whole-school staff change them.
AGE_AND_LEVEL = ("dob", "level")


class Learner(models.Model):
    """A learner registered upstream under the partner's subscription."""

    class Status(models.TextChoices):
        # A learner is saved locally before the upstream call and becomes active once the
        # upstream has returned a user_id; a failed call removes it again.
        # Translators: The state of a learner's record in the portal.
        PENDING = "pending", gettext_lazy("Registration pending")
        ACTIVE = "active", gettext_lazy("Active")
        # Personal data erased (privacy.services): an anonymous record kept for counts.
        ERASED = "erased", gettext_lazy("Personal data erased")

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="learner"
    )
    upstream_user_id = models.CharField(
        gettext_lazy("upstream user id"), max_length=200, unique=True, null=True, blank=True
    )
    username = models.CharField(max_length=150, unique=True)
    first_name = models.CharField(max_length=150, blank=True)
    last_name = models.CharField(max_length=150, blank=True)
    email = models.EmailField(blank=True)
    # Required at registration (the form and the upstream insist); empty only once erased.
    dob = models.DateField(gettext_lazy("date of birth"), null=True, blank=True)
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
    erased_at = models.DateTimeField(gettext_lazy("personal data erased at"), null=True, blank=True)

    class Meta:
        ordering = ["-registered_at", "-id"]
        indexes = [
            # The staff list's order, over the only learners it shows: page N reads N x 25
            # index entries (index-only, hence the id) instead of sorting the table; with a
            # level first for the filter. Search by words uses trigram indexes on PostgreSQL
            # (migration 0004).
            models.Index(
                fields=["last_name", "first_name", "username", "id"],
                condition=models.Q(status="active"),
                name="learner_active_name_idx",
            ),
            models.Index(
                fields=["level", "last_name", "first_name", "username", "id"],
                condition=models.Q(status="active"),
                name="learner_active_level_name_idx",
            ),
            models.Index(fields=["level", "registered_at"]),
            # The list's count of registered learners, read from a small index alone.
            models.Index(
                fields=["id"], condition=models.Q(status="active"), name="learner_active_idx"
            ),
            # The dashboard's "registered" count (active and erased, by level and date) from
            # the index alone.
            models.Index(
                fields=["status", "level", "registered_at"], name="learner_status_level_reg_idx"
            ),
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


def current_academic_year(today: date | None = None) -> str:
    """Return the school year a date falls in, as "2026/27" (years start in September)."""
    today = today or timezone.localdate()
    start = today.year if today.month >= 9 else today.year - 1
    return f"{start}/{(start + 1) % 100:02d}"


class SchoolGroup(models.Model):
    """A teaching class, tutor group or year group: the learners its staff look after."""

    class Kind(models.TextChoices):
        TEACHING_CLASS = "class", gettext_lazy("Teaching class")
        TUTOR_GROUP = "tutor", gettext_lazy("Tutor group")
        YEAR_GROUP = "year", gettext_lazy("Year group")

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
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-academic_year", "name", "id"]
        constraints = [
            # "7B" and "7b" in one year would be two groups nobody can tell apart.
            models.UniqueConstraint(
                Lower("name"), "academic_year", name="school_group_unique_name_per_year"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.academic_year})"


class GroupStaff(models.Model):
    """A member of staff who works with a group, and so sees its learners."""

    group = models.ForeignKey(SchoolGroup, on_delete=models.CASCADE, related_name="staff_links")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="group_links"
    )
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["group", "user"], name="group_staff_once"),
        ]

    def __str__(self) -> str:
        return f"{self.user} works with {self.group}"


class GroupMembership(models.Model):
    """A learner's time in a group: history is kept, the current one has no `left_at`."""

    group = models.ForeignKey(SchoolGroup, on_delete=models.CASCADE, related_name="memberships")
    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="group_memberships")
    joined_at = models.DateTimeField(default=timezone.now)
    left_at = models.DateTimeField(null=True, blank=True)
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    removed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
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
