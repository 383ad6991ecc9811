"""Background tasks (django-tasks, database queue): bulk registration, one task per row.

Besides the rows' own tasks, a checked file's passwords are hashed a batch at a time while
staff read its preview (imports.hashing), behind every row still to send.
"""

from django.conf import settings
from django.db import transaction
from django.utils import translation
from django_tasks import task

from ops.request_context import carries_request_id
from ops.tasks import enqueue_when

# Hashing a password is slow on purpose: queued behind every row still to send, so that it
# never holds up the upstream calls.
SIGNIN_PRIORITY = -10
PREVIEW_HASH_PRIORITY = SIGNIN_PRIORITY


# Their own queue and workers: an import keeps its workers busy for minutes (hashing
# included), and learners' submissions must not wait behind it.
@task(queue_name="imports")
@carries_request_id
def run_import_job(job_id: int, language: str | None = None) -> None:
    """Queue a task for each row of a confirmed import job; resumes a job whose tasks were lost.

    `language` is that of the staff member who started or resumed it: the rows' reasons are
    written in it (the site's default language when none is given).
    """
    from imports.run import import_job_run

    with translation.override(language or settings.LANGUAGE_CODE):
        import_job_run(job_id=job_id)


@task(queue_name="imports")
@carries_request_id
def register_import_row(row_id: int, language: str | None = None) -> None:
    """Register one row of an import upstream, unless another task has it or it is done."""
    from imports.run import import_row_run

    with translation.override(language or settings.LANGUAGE_CODE):
        import_row_run(row_id=row_id)


@task(queue_name="imports", priority=SIGNIN_PRIORITY)
@carries_request_id
def make_import_row_signin_ready(row_id: int) -> None:
    """Hash a registered row's password into its account, which opens; finish the job if last."""
    from imports.run import import_row_signin

    import_row_signin(row_id=row_id)


@task(queue_name="imports", priority=PREVIEW_HASH_PRIORITY)
@carries_request_id
def hash_preview_passwords(row_ids: list[int]) -> None:
    """Hash the passwords of a preview's rows, ahead of their sending."""
    from imports.hashing import preview_passwords_hash

    preview_passwords_hash(row_ids=row_ids)


def enqueue_preview_hashing(job_id: int) -> None:
    """Queue the hashing of a checked file's passwords, a batch of rows a task."""
    from imports.hashing import preview_batches

    with transaction.atomic():  # one commit for all of them, not one per task
        for row_ids in preview_batches(job_id):
            enqueue_when(hash_preview_passwords, row_ids)


def enqueue_job_run(job_id: int, language: str | None) -> None:
    """Queue the run that queues the job's rows."""
    enqueue_when(run_import_job, job_id, language)


def enqueue_row_registration(row_id: int) -> None:
    """Queue the registration of one row, to be written in the current language."""
    enqueue_when(register_import_row, row_id, translation.get_language())


def enqueue_row_signin(row_id: int) -> None:
    """Queue the hashing of a registered row's password."""
    enqueue_when(make_import_row_signin_ready, row_id)
