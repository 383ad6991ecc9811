"""Roster syncs, and which of the roster's people and classes are which of the portal's."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy


class RosterSync(models.Model):
    """One roster file set: read, planned, then applied at once, or held for an admin."""

    class State(models.TextChoices):
        # Translators: The state of a sync of the school's records (a OneRoster file set).
        READING = "reading", gettext_lazy("Being read")
        HELD = "held", gettext_lazy("Held for an admin")
        APPLYING = "applying", gettext_lazy("Being applied")
        APPLIED = "applied", gettext_lazy("Applied")
        DISCARDED = "discarded", gettext_lazy("Discarded")
        FAILED = "failed", gettext_lazy("Could not be read")

    class Origin(models.TextChoices):
        UPLOAD = "upload", gettext_lazy("Uploaded")
        DROP = "drop", gettext_lazy("Drop folder")
        COMMAND = "command", gettext_lazy("Command")

    # The one school the sync was limited to (`--school CODE`); none: every school it names.
    school = models.ForeignKey(
        "schools.School", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # The schools its plan touches (filled when planned): a school's admins see their part.
    schools = models.ManyToManyField("schools.School", blank=True, related_name="+")
    origin = models.CharField(max_length=16, choices=Origin.choices)
    filename = models.CharField(max_length=255, blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.READING)
    version = models.CharField(max_length=8, blank=True)  # "1.1" or "1.2"
    modes = models.JSONField(default=dict, blank=True)  # file -> bulk, delta, absent
    # The plan (roster.plan.SyncPlan.to_json): what approving applies, exactly as previewed.
    plan = models.JSONField(default=dict, blank=True)
    hold_reasons = models.JSONField(default=list, blank=True)
    # The counts of the one-line summary, and why a sync that could not be read failed.
    joined = models.PositiveIntegerField(default=0)
    left = models.PositiveIntegerField(default=0)
    changed = models.PositiveIntegerField(default=0)
    problems = models.PositiveIntegerField(default=0)
    # The same counts per school it touches ({school id: {joined, left, changed, problems}}):
    # the list shows a school admin their part without reading the whole plan.
    school_figures = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    # The pupils it registers: a bulk registration job per school (imports.run), linked here
    # (never found by name: a hand-uploaded file may carry any name).
    import_jobs = models.ManyToManyField("imports.ImportJob", blank=True, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # When a worker took up reading it (an upload, read in the background): sweep_roster
    # fails one whose worker has been silent too long.
    started_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["state", "created_at"])]

    def __str__(self) -> str:
        return f"roster sync {self.pk}"

    def summary_line(self) -> str:
        """Return the command's one line: `roster sync N: applied|held: J joined, ...`."""
        applied = self.state in (self.State.APPLIED, self.State.APPLYING)
        outcome = "applied" if applied else self.state
        return (
            f"roster sync {self.pk}: {outcome}: {self.joined} joined, {self.left} left, "
            f"{self.changed} changed, {self.problems} problems"
        )


class RosterPerson(models.Model):
    """A person of the roster's users.csv the portal knows: a pupil's learner or a teacher."""

    class Role(models.TextChoices):
        STUDENT = "student", gettext_lazy("Pupil")
        TEACHER = "teacher", gettext_lazy("Teacher")

    school = models.ForeignKey("schools.School", on_delete=models.PROTECT, related_name="+")
    # The upstream's id, unique in its school only: two schools' own systems may share ids.
    sourced_id = models.CharField(max_length=255)
    role = models.CharField(max_length=16, choices=Role.choices)
    learner = models.OneToOneField(
        "learners.Learner",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="roster_person",
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    # A pupil whose registration is under way: the bulk run's row, until it has a learner.
    import_row = models.ForeignKey(
        "imports.ImportRow", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    grade = models.CharField(max_length=16, blank=True)
    # The row's dateLastModified when last applied: a delta row no newer changes nothing.
    last_modified = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["school", "role"])]
        constraints = [
            models.UniqueConstraint(
                fields=["school", "sourced_id"], name="roster_person_school_sourced_id"
            )
        ]

    def __str__(self) -> str:
        return f"{self.role} {self.sourced_id}"


class RosterClass(models.Model):
    """A class of the roster's classes.csv (or a year group made from grades): its group."""

    school = models.ForeignKey("schools.School", on_delete=models.PROTECT, related_name="+")
    sourced_id = models.CharField(max_length=255)  # unique in its school only
    group = models.OneToOneField(
        "classes.SchoolGroup", on_delete=models.CASCADE, related_name="roster_class"
    )
    last_modified = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["school", "sourced_id"], name="roster_class_school_sourced_id"
            )
        ]

    def __str__(self) -> str:
        return f"class {self.sourced_id}"


class RosterLock(models.Model):
    """The one row a sync writes to while it plans and applies: one sync at a time.

    Two drop-folder files, or an upload and an approval, never interleave: the second waits
    for the first's transaction to end, then plans from what the first left.
    """

    taken_at = models.DateTimeField(null=True, blank=True)
    taken_by_sync = models.PositiveIntegerField(null=True, blank=True)

    def __str__(self) -> str:
        return "roster lock"
