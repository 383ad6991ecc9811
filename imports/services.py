"""Bulk registration from a CSV file: import jobs from upload to one-time credentials.

The reads for the pages are in imports.selectors. The file is read in imports.files and its
rows checked in imports.checks, rows are sent by one task each in imports.run, passwords are
generated in learners.passwords and encrypted in imports.passwords.
"""

import contextlib
import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from audit.models import AuditEvent
from audit.services import audit_record
from imports.checks import rows_check
from imports.files import ImportFileError, file_rows
from imports.models import ImportJob, ImportRow
from imports.passwords import password_decrypt
from imports.rows import rows_abandon_left_sending
from imports.run import import_job_finish_if_done
from imports.tasks import enqueue_job_run, enqueue_preview_hashing
from learners.models import Learner

__all__ = [
    "CredentialsGone",
    "ImportFileError",
    "ImportJobClosed",
    "import_credentials_take",
    "import_job_confirm",
    "import_job_create_from_csv",
    "import_job_discard",
    "import_job_resume_if_stalled",
    "import_jobs_sweep",
    "import_rows_forget",
]

logger = logging.getLogger(__name__)

# Rows are checked and stored this many at a time: memory stays flat however long the file.
BATCH_SIZE = 500


class ImportJobClosed(Exception):
    """The job cannot be confirmed or discarded any more; the message says why."""


class CredentialsGone(Exception):
    """The generated passwords were downloaded already, or have expired."""


def import_job_create_from_csv(
    *, file, created_by: AbstractBaseUser | None, replaces: int | None = None
) -> ImportJob:
    """Read and check an uploaded CSV file into a job awaiting confirmation; nothing is sent.

    `replaces` names the preview this file corrects: it is discarded, unless it was confirmed
    meanwhile (in another tab), in which case it stands. Raises ImportFileError (and keeps
    nothing) when the file as a whole cannot be used.
    """
    job = _job_create_from_csv(file=file, created_by=created_by)
    # Hashed while staff read the preview: a job confirmed after that sends its rows at the
    # upstream's pace, each account opening with its outcome.
    enqueue_preview_hashing(job.pk)
    # Only a preview of the same school: a forged id of another school's changes nothing.
    replaced = (
        ImportJob.objects.filter(pk=replaces, school_id=job.school_id).first() if replaces else None
    )
    if replaced is not None:
        with contextlib.suppress(ImportJobClosed):
            import_job_discard(job=replaced)
    return job


def _job_create_from_csv(*, file, created_by: AbstractBaseUser | None) -> ImportJob:
    """Store the file's rows, each checked, in a new job (in one transaction)."""
    with transaction.atomic():
        job = ImportJob.objects.create(
            filename=str(getattr(file, "name", "") or "")[:255],
            created_by=created_by,
            created_at=timezone.now(),
        )
        first_seen: dict[str, int] = {}
        batch = []
        for row in file_rows(file):
            batch.append(row)
            if len(batch) == BATCH_SIZE:
                _rows_store(job, batch, first_seen)
                batch = []
        if batch:
            _rows_store(job, batch, first_seen)
        counts = ImportRow.objects.filter(job=job).aggregate(
            total=Count("pk"),
            invalid=Count("pk", filter=Q(state=ImportRow.State.INVALID)),
            generated=Count("pk", filter=Q(password_generated=True)),
        )
        job.total_rows = counts["total"]
        job.invalid_rows = counts["invalid"]
        job.valid_rows = counts["total"] - counts["invalid"]
        job.generated_passwords = counts["generated"]
        job.save(update_fields=["total_rows", "invalid_rows", "valid_rows", "generated_passwords"])
    return job


def _rows_store(job: ImportJob, batch: list, first_seen: dict[str, int]) -> None:
    ImportRow.objects.bulk_create(rows_check(job, batch, first_seen=first_seen))


def import_job_confirm(
    *, job: ImportJob, confirmed_by: AbstractBaseUser, address: str | None = None
) -> ImportJob:
    """Start registering the job's valid rows in the background (a repeat does nothing).

    The start is audited once, however many clicks.
    """
    with transaction.atomic():
        if job.valid_rows == 0:
            raise ImportJobClosed(_("The file has no valid rows. Upload a corrected file."))
        started = ImportJob.objects.filter(pk=job.pk, state=ImportJob.State.PREVIEW).update(
            state=ImportJob.State.RUNNING, confirmed_by=confirmed_by, confirmed_at=timezone.now()
        )
        job.refresh_from_db()
        if not started and job.state == ImportJob.State.DISCARDED:
            raise ImportJobClosed(_("This import was discarded. Upload the file again."))
        if started:
            audit_record(
                actor=confirmed_by,
                address=address,
                action=AuditEvent.Action.LEARNERS_IMPORTED,
                import_job=job.pk,
                rows_to_register=job.valid_rows,
                rows_skipped=job.invalid_rows,
            )
            # After commit: the worker must find the job running. It writes the rows'
            # reasons in the language of the staff member who started it.
            language = get_language()
            transaction.on_commit(lambda: enqueue_job_run(job.pk, language))
    job.refresh_from_db()
    return job


def import_job_discard(*, job: ImportJob) -> None:
    """Drop a job that was never confirmed, with its rows' encrypted passwords."""
    with transaction.atomic():
        discarded = ImportJob.objects.filter(pk=job.pk, state=ImportJob.State.PREVIEW).update(
            state=ImportJob.State.DISCARDED
        )
        if not discarded:
            raise ImportJobClosed(_("This import has already started; it cannot be discarded."))
        job.rows.update(password_encrypted="", password_hash="")
    job.refresh_from_db()


def import_job_resume_if_stalled(*, job: ImportJob) -> bool:
    """Take up what a dead worker left of a running job; True if the job changed.

    The progress page calls it, and so does `import_jobs_sweep`: a job whose worker died (or
    whose tasks were lost) carries on, never resending a row that may have been sent.
    """
    return any(_job_take_up(job).values())


def _job_take_up(job: ImportJob) -> dict[str, int]:
    """Fail rows cut off mid-call, finish a job with nothing left, run a silent job again.

    A row claimed longer than IMPORT_STALLED_AFTER ago and still "sending" was cut off with its
    worker (a call takes far less): it is failed as of unknown outcome, never sent again. When
    no row of any running import moved for IMPORT_STALLED_AFTER seconds, a job with rows left
    lost its tasks with a worker, or every imports worker is down: it is run again, at most
    once a period, and that run queues the rows left (a task of the first run still waiting
    then finds its row done). While another import keeps the workers busy, its rows move, and
    the tasks of this one are only waiting their turn.
    """
    taken_up = {"unknown": 0, "finished": 0, "resumed": 0}
    if job.state != ImportJob.State.RUNNING:
        return taken_up
    now = timezone.now()
    silent_since = now - timedelta(seconds=settings.IMPORT_STALLED_AFTER)
    silent = _imports_silent_since(job.pk, silent_since)  # before the rows failed here move
    taken_up["unknown"] = rows_abandon_left_sending(job.pk, claimed_before=silent_since)
    if import_job_finish_if_done(job_id=job.pk):
        taken_up["finished"] = 1
    elif silent:
        taken_up["resumed"] = (
            ImportJob.objects.filter(pk=job.pk, state=ImportJob.State.RUNNING)
            .filter(Q(resume_requested_at__isnull=True) | Q(resume_requested_at__lt=silent_since))
            .update(resume_requested_at=now)
        )
    if taken_up["resumed"]:
        logger.warning("Import %s: no import row moved for a while; running it again", job.pk)
        language = get_language()
        transaction.on_commit(lambda: enqueue_job_run(job.pk, language))
    return taken_up


def _imports_silent_since(job_id: int, moment: datetime) -> bool:
    """Return whether the job was not confirmed, run or resumed, nor any import row moved, since."""
    job_moments = (
        ImportJob.objects.filter(pk=job_id)
        .values_list("confirmed_at", "started_at", "rows_queued_at", "resume_requested_at")
        .get()
    )
    if any(when is not None and when >= moment for when in job_moments):
        return False  # the rows need not be read (the progress page asks every few seconds)
    moved = ImportRow.objects.filter(job__state=ImportJob.State.RUNNING).filter(
        Q(claimed_at__gte=moment) | Q(finished_at__gte=moment) | Q(signin_ready_at__gte=moment)
    )
    return not moved.exists()


def import_credentials_take(
    *, job: ImportJob, taken_by: AbstractBaseUser, address: str | None = None
) -> list[tuple[int, str, str, str, str]]:
    """Return the generated passwords (row, username, password, names) once, wiping them.

    The download is audited with the number of learners whose passwords it holds.

    Raises CredentialsGone when they were downloaded already, have expired, or were never made.
    """
    import_credentials_expire()
    with transaction.atomic():
        taken = ImportJob.objects.filter(
            pk=job.pk,
            state=ImportJob.State.FINISHED,
            generated_passwords__gt=0,
            credentials_downloaded_at__isnull=True,
            credentials_wiped_at__isnull=True,
        ).update(credentials_downloaded_at=timezone.now(), credentials_wiped_at=timezone.now())
        if not taken:
            raise CredentialsGone
        rows = ImportRow.objects.filter(
            job=job, password_generated=True, state=ImportRow.State.REGISTERED
        ).exclude(password_encrypted="")
        credentials = [
            (row_number, username, password_decrypt(token), first_name, last_name)
            for row_number, username, token, first_name, last_name in rows.order_by(
                "row_number"
            ).values_list("row_number", "username", "password_encrypted", "first_name", "last_name")
        ]
        job.rows.update(password_encrypted="")
        audit_record(
            actor=taken_by,
            address=address,
            action=AuditEvent.Action.CREDENTIALS_DOWNLOADED,
            import_job=job.pk,
            learners=len(credentials),
        )
    return credentials


def import_credentials_expire() -> int:
    """Wipe the generated passwords of jobs finished longer ago than IMPORT_CREDENTIALS_TTL."""
    cutoff = timezone.now() - timedelta(seconds=settings.IMPORT_CREDENTIALS_TTL)
    wiped = 0
    expired = ImportJob.objects.filter(
        state=ImportJob.State.FINISHED, finished_at__lt=cutoff, credentials_wiped_at__isnull=True
    )
    for job_id in expired.values_list("pk", flat=True):
        with transaction.atomic():
            if ImportJob.objects.filter(pk=job_id, credentials_wiped_at__isnull=True).update(
                credentials_wiped_at=timezone.now()
            ):
                ImportRow.objects.filter(job_id=job_id).update(password_encrypted="")
                wiped += 1
    return wiped


def import_jobs_sweep() -> dict[str, int]:
    """Take up running jobs a worker left, expire credentials, drop old previews and jobs."""
    now = timezone.now()
    taken_up = {"unknown": 0, "finished": 0, "resumed": 0}
    for job in ImportJob.objects.filter(state=ImportJob.State.RUNNING):
        for key, count in _job_take_up(job).items():
            taken_up[key] += count
    expired = import_credentials_expire()
    stale_previews = ImportJob.objects.filter(
        state=ImportJob.State.PREVIEW,
        created_at__lt=now - timedelta(seconds=settings.IMPORT_PREVIEW_TTL),
    )
    discarded = 0
    for job in stale_previews:
        try:
            import_job_discard(job=job)
            discarded += 1
        except ImportJobClosed:
            pass  # confirmed meanwhile
    old = ImportJob.objects.filter(
        state__in=[ImportJob.State.FINISHED, ImportJob.State.DISCARDED],
        created_at__lt=now - timedelta(days=settings.IMPORT_KEEP_DAYS),
    )
    deleted = old.count()
    old.delete()
    return {**taken_up, "expired": expired, "discarded": discarded, "deleted": deleted}


def import_rows_forget(*, learner: Learner) -> int:
    """Blank what import rows hold about a learner whose personal data is erased."""
    return ImportRow.objects.filter(learner=learner).update(
        username="",
        first_name="",
        last_name="",
        email="",
        dob=None,
        password_encrypted="",
        password_hash="",
    )
