"""Bulk registrations: an uploaded file's job and its rows, each a learner to register.

The tables keep the names they had when the learners app held these models (learners_importjob,
learners_importrow): moving the code moved no data.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from learners.models import Learner
from schools.models import default_school_id


class ImportJob(models.Model):
    """A bulk registration from a CSV file: checked, confirmed by staff, then sent row by row."""

    class State(models.TextChoices):
        # Translators: The state of a bulk registration from a CSV file.
        PREVIEW = "preview", gettext_lazy("Checked, waiting for confirmation")
        RUNNING = "running", gettext_lazy("Registering")
        FINISHED = "finished", gettext_lazy("Finished")
        DISCARDED = "discarded", gettext_lazy("Discarded")

    # The school this belongs to: every page, list and export is scoped by it.
    school = models.ForeignKey(
        "schools.School", on_delete=models.PROTECT, default=default_school_id, related_name="+"
    )
    filename = models.CharField(max_length=255, blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PREVIEW)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField()
    total_rows = models.PositiveIntegerField(default=0)
    valid_rows = models.PositiveIntegerField(default=0)
    invalid_rows = models.PositiveIntegerField(default=0)
    generated_passwords = models.PositiveIntegerField(default=0)
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    confirmed_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When a run last queued the rows' tasks (imports.run), and when the sweep or the
    # progress page last asked for that again: a run asked for once queues them once.
    rows_queued_at = models.DateTimeField(null=True, blank=True)
    resume_requested_at = models.DateTimeField(null=True, blank=True)
    credentials_downloaded_at = models.DateTimeField(null=True, blank=True)
    credentials_wiped_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # The table keeps the name it had when the learners app held the model.
        db_table = "learners_importjob"
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["state", "created_at"])]

    def __str__(self) -> str:
        if not self.filename:
            return _("Import %(number)s (no file name)") % {"number": self.pk}
        return _("Import %(number)s (%(filename)s)") % {
            "number": self.pk,
            "filename": self.filename,
        }


class ImportRow(models.Model):
    """One learner of an import file, its problems if invalid, and what became of it."""

    class State(models.TextChoices):
        # Translators: The state of one row (one learner) of a bulk registration file.
        INVALID = "invalid", gettext_lazy("Skipped as invalid")
        QUEUED = "queued", gettext_lazy("Waiting")
        # Claimed by its task and possibly sent: a row found here after its worker died is
        # never sent again (the service may have registered it).
        SENDING = "sending", gettext_lazy("Being registered")
        REGISTERED = "registered", gettext_lazy("Registered")
        FAILED = "failed", gettext_lazy("Failed")

    job = models.ForeignKey(ImportJob, on_delete=models.CASCADE, related_name="rows")
    row_number = models.PositiveIntegerField(
        help_text=gettext_lazy("The row in the file; the header is row 1.")
    )
    username = models.CharField(max_length=150, blank=True)
    first_name = models.CharField(max_length=150, blank=True)
    last_name = models.CharField(max_length=150, blank=True)
    email = models.CharField(max_length=254, blank=True)
    dob = models.DateField(gettext_lazy("date of birth"), null=True, blank=True)
    level = models.CharField(max_length=32, blank=True)
    # The school the learner is registered into: the row's `school` cell, else the job's.
    school = models.ForeignKey(
        "schools.School", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # The groups the file's `class` cell named, joined once the learner is registered.
    group_ids = models.JSONField(default=list, blank=True)
    # Fernet-encrypted (imports.passwords), wiped once hashed locally; a generated one
    # is kept until its one-time credentials download or an hour after the job finished.
    password_encrypted = models.TextField(blank=True)
    password_generated = models.BooleanField(default=False)
    # The password's hash, made in the background while staff read the preview
    # (imports.hashing): the account opens with it, and it is wiped then (or when the row
    # fails or its job is discarded), never kept beside the account's own.
    password_hash = models.TextField(blank=True)
    problems = models.JSONField(default=list, blank=True)
    state = models.CharField(max_length=16, choices=State.choices)
    reason = models.TextField(blank=True)
    learner = models.ForeignKey(
        Learner, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    signin_ready_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "learners_importrow"
        ordering = ["job", "row_number"]
        constraints = [
            models.UniqueConstraint(fields=["job", "row_number"], name="import_row_unique_number")
        ]
        indexes = [models.Index(fields=["job", "state"])]

    def __str__(self) -> str:
        return _("Row %(row)s of import %(number)s") % {
            "row": self.row_number,
            "number": self.job_id,
        }
