"""Running a confirmed bulk registration: one task per row on the `imports` queue.

The run (`import_job_run`, queued when staff confirm) makes the rows' local accounts a batch at
a time and queues one task per row. A row's task (`import_row_run`) claims its row by a
conditional update (queued -> sending), registers it upstream (imports.rows, through the
learners app's registration) and records the outcome, opening its account with its password's
hash (made while staff read the preview, or during the call: imports.hashing). The row's state
is the lock: a task
whose row is taken or done does nothing, so a row queued twice is sent once. Whichever task
finishes the last row finishes the job, once.

There is no hold on the job and no heartbeat: what a dead worker leaves behind is the sweep's
(imports.services.import_job_resume_if_stalled), as for deliveries. A row left "sending" is
failed as of unknown outcome, never sent again; a job none of whose rows moved for a while is
run again, which queues whatever rows are left.
"""

import logging
from collections.abc import Iterator

from django.db import transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from imports import tasks
from imports.models import ImportJob, ImportRow
from imports.rows import (
    import_row_make_signin_ready,
    import_row_register,
    queued_row_ids,
    rows_awaiting_signin,
    rows_left,
    rows_prepare,
)
from partner_api import get_client

logger = logging.getLogger(__name__)

# Local accounts are made this many rows at a time, with their rows' tasks; the first batch
# is small, so that the other workers have rows to send at once.
PREPARE_BATCH = 100
FIRST_BATCH = 10


def import_job_run(*, job_id: int) -> None:
    """Queue a task for each row of a running job still to send or to make ready to sign in.

    A run asked for twice (a resume queued while the first was still waiting) queues the rows
    once: it claims the request with a conditional update, as a row's task claims its row.
    """
    now = timezone.now()
    # Asked for by the confirmation (never queued yet) or by a resume since the last run.
    asked = Q(rows_queued_at__isnull=True) | Q(rows_queued_at__lt=F("resume_requested_at"))
    claimed = ImportJob.objects.filter(asked, pk=job_id, state=ImportJob.State.RUNNING).update(
        rows_queued_at=now, started_at=Coalesce("started_at", now)
    )
    if not claimed:
        logger.info("Import %s is not running, or its rows are queued already", job_id)
        return
    for batch in _batches(queued_row_ids(job_id)):
        # The accounts and the tasks that send their rows are written together.
        with transaction.atomic():
            for row in rows_prepare(batch):
                tasks.enqueue_row_registration(row.pk)
    for row_id in rows_awaiting_signin(job_id):
        tasks.enqueue_row_signin(row_id)
    # Every row may have failed before any task ran (a username taken here since the check).
    import_job_finish_if_done(job_id=job_id)


def _batches(row_ids: list[int]) -> Iterator[list[int]]:
    """Yield the ids a batch at a time, the first batch small."""
    yield row_ids[:FIRST_BATCH]
    for start in range(FIRST_BATCH, len(row_ids), PREPARE_BATCH):
        yield row_ids[start : start + PREPARE_BATCH]


def import_row_run(*, row_id: int) -> None:
    """Register one queued row upstream and record the outcome; nothing if taken or done."""
    # Its account is normally made by the run already; made here if it went meanwhile.
    prepared = rows_prepare([row_id])
    if not prepared:
        # Done or taken by another task, or failed just now: its username is taken here.
        job_id = ImportRow.objects.filter(pk=row_id).values_list("job_id", flat=True).first()
    else:
        # Registered and ready, or failed: either may be the job's last row. (A row whose
        # hash is still to be made leaves that to its sign-in task.)
        import_row_register(row=prepared[0], client=get_client())
        job_id = prepared[0].job_id
    if job_id is not None:
        import_job_finish_if_done(job_id=job_id)


def import_row_signin(*, row_id: int) -> None:
    """Make a registered row's account ready to sign in; finish the job if it was the last."""
    job_id = import_row_make_signin_ready(row_id=row_id)
    if job_id is not None:
        import_job_finish_if_done(job_id=job_id)


def import_job_finish_if_done(*, job_id: int) -> bool:
    """Finish a running job none of whose rows is left to send or to make ready; True if now.

    Each task checks after its own row's outcome is committed, so the last of two tasks ending
    together sees both; the conditional update lets only one of them finish it.
    """
    if rows_left(job_id).exists():
        return False
    finished = ImportJob.objects.filter(pk=job_id, state=ImportJob.State.RUNNING).update(
        state=ImportJob.State.FINISHED, finished_at=timezone.now()
    )
    if finished:
        logger.info("Import %s finished", job_id)
    return bool(finished)
