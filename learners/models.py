"""The Learner record: a local sign-in account tied to an upstream learner."""

from django.conf import settings
from django.db import models
from django.db.models import Q, Value
from django.db.models.functions import Concat
from django.utils.translation import gettext_lazy

from partner_api.levels import Level  # re-exported: learners.models.Level is the usual name
from schools.models import default_school_id

__all__ = ["AGE_AND_LEVEL", "Learner", "Level"]


# A learner's details that decide safeguarding (how long records are kept, whether an adult's
# results raise an alert) and what a pupil's pages say: only whole-school staff change them.
AGE_AND_LEVEL = ("dob", "level")


# The shortest word the trigram indexes of the search can find (learners migration 0004).
TRIGRAM = 3


class LearnerQuerySet(models.QuerySet):
    def registered(self) -> "LearnerQuerySet":
        """Return the learners whose upstream registration completed."""
        return self.filter(status=Learner.Status.ACTIVE)

    def matching(self, *, query: str = "", level: str = "") -> "LearnerQuerySet":
        """Return registered learners matching a search and level, in list order, nothing joined."""
        learners = self.registered()
        for word in query.split()[:5]:
            # Every word must match somewhere, so "Amira Khan" finds Amira Khan.
            learners = learners.filter(
                Q(username__icontains=word)
                | Q(first_name__icontains=word)
                | Q(last_name__icontains=word)
                | Q(email__icontains=word)
            )
        if level:
            learners = learners.filter(level=level)
        if any(len(word) >= TRIGRAM for word in query.split()[:5]):
            # PostgreSQL would walk the name index and filter, expecting matches spread evenly;
            # "Khan" sits mid-alphabet, so it read 40,000 rows first (107 ms). An order the
            # index cannot give makes it take the matches from the trigram indexes and sort
            # them. Words too short for a trigram match densely: walking the index finds a
            # page at once.
            return learners.order_by(Concat("last_name", Value("")), *Learner.LIST_ORDER[1:])
        return learners.order_by(*Learner.LIST_ORDER)


class Learner(models.Model):
    """A learner registered upstream under the partner's subscription."""

    # The order of every list of learners: by name, the way the indexes serve best.
    LIST_ORDER = ("last_name", "first_name", "username")

    class Status(models.TextChoices):
        # A learner is saved locally before the upstream call and becomes active once the
        # upstream has returned a user_id; a failed call removes it again.
        # Translators: The state of a learner's record in the portal.
        PENDING = "pending", gettext_lazy("Registration pending")
        ACTIVE = "active", gettext_lazy("Active")
        # Personal data erased (privacy.services): an anonymous record kept for counts.
        ERASED = "erased", gettext_lazy("Personal data erased")

    # The school this belongs to: every page, list and export is scoped by it.
    school = models.ForeignKey(
        "schools.School", on_delete=models.PROTECT, default=default_school_id, related_name="+"
    )
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
    # Set when the school's records say the learner left (roster sync): they no longer sign in
    # or start an assessment, their records stay; cleared when they come back.
    left_at = models.DateTimeField(gettext_lazy("left the school on"), null=True, blank=True)
    erased_at = models.DateTimeField(gettext_lazy("personal data erased at"), null=True, blank=True)

    objects = LearnerQuerySet.as_manager()

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
            # The same within one school of several (a school's staff see only theirs): the
            # school first, so a school's page reads its own entries only. With one school no
            # query names it, and the indexes above serve as before.
            models.Index(
                fields=["school", "last_name", "first_name", "username", "id"],
                condition=models.Q(status="active"),
                name="learner_school_name_idx",
            ),
            models.Index(
                fields=["school", "level", "last_name", "first_name", "username", "id"],
                condition=models.Q(status="active"),
                name="learner_school_level_name_idx",
            ),
            # A school's dashboard counts, and its learners' ids for joins, from the index alone.
            models.Index(
                fields=["school", "status", "level", "registered_at", "id"],
                name="learner_school_status_idx",
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
