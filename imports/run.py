"""Running a confirmed bulk registration: rows sent upstream a few at a time, passwords hashed
beside them, the whole resumable after the worker dies without ever sending a row twice.

Rows are sent by IMPORT_CONCURRENCY calls in flight (each row's steps are in imports.rows); a
separate small pool hashes each registered row's password and opens its account, so the slow
hasher never holds up the upstream calls. A run holds the job through a heartbeat; a run that
finds the job held by a silent runner takes it over and fails the rows left in "sending" as of
unknown outcome, never resending them.
"""

import logging
import os
import queue
import secrets
import sys
import threading
import time
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone, translation

from imports.models import ImportJob, ImportRow
from imports.rows import (
    import_row_make_signin_ready,
    import_row_register,
    queued_row_ids,
    rows_abandon_left_sending,
    rows_awaiting_signin,
    rows_prepare,
)
from partner_api import get_client

logger = logging.getLogger(__name__)

# How often a run renews its hold on the job; IMPORT_STALLED_AFTER must be well above it.
HEARTBEAT_SECONDS = 2.0
# Local accounts are made this many rows at a time, a batch ahead of the senders.
PREPARE_BATCH = 100
# Hashing threads run at this nice value (Linux): the pipeline's threads, the database and
# the rest of the machine come first.
HASHING_NICENESS = 10


def import_job_run(*, job_id: int) -> None:
    """Register the job's queued rows and make them ready to sign in; no-op if held elsewhere."""
    token = secrets.token_hex(16)
    if not _job_acquire(job_id, token):
        logger.info("Import %s is not running or another run holds it", job_id)
        return
    try:
        rows_abandon_left_sending(job_id)
        if connection.in_atomic_block:
            # Other threads could not see this transaction's rows: send them one by one here.
            _run_inline(job_id)
        else:
            _run_threaded(job_id, token)
        _job_finish_or_release(job_id, token)
    except BaseException:
        _job_release(job_id, token)  # let a resume take over at once
        raise


# The run ---------------------------------------------------------------------------------------


def _run_inline(job_id: int) -> None:
    """Send and then ready each queued row in this thread."""
    client = get_client()
    row_ids = queued_row_ids(job_id)
    for first in range(0, len(row_ids), PREPARE_BATCH):
        for row in rows_prepare(row_ids[first : first + PREPARE_BATCH]):
            import_row_register(row=row, client=client)
    for row_id in rows_awaiting_signin(job_id):
        import_row_make_signin_ready(row_id=row_id)


def _run_threaded(job_id: int, token: str) -> None:
    """Send rows with IMPORT_CONCURRENCY threads and hash beside them, renewing the hold.

    This thread makes the local accounts a batch ahead of the senders (one bulk insert per
    batch instead of several queries per row on the senders' path) and renews the hold.
    """
    client = get_client()
    to_send: queue.Queue[ImportRow] = queue.Queue()
    to_hash: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    for row_id in rows_awaiting_signin(job_id):
        to_hash.put(row_id)
    stop = threading.Event()
    all_prepared = threading.Event()

    def send() -> None:
        while not stop.is_set():
            try:
                row = to_send.get(timeout=0.1)
            except queue.Empty:
                # Once all are prepared nothing more is put, so an empty queue means done.
                if all_prepared.is_set() and to_send.empty():
                    return
                continue
            if import_row_register(row=row, client=client, call_slot=call_slot):
                to_hash.put(row.pk)

    def hash_passwords() -> None:
        _yield_cpu_to_senders()
        while (row_id := to_hash.get()) is not None:
            try:
                import_row_make_signin_ready(row_id=row_id)
            except Exception:
                # The row stays not ready; the next run of the job picks it up again.
                logger.exception("Import row %s could not be made ready to sign in", row_id)

    # Twice as many senders as calls allowed in flight: while one thread writes an outcome,
    # another already holds its call slot, so IMPORT_CONCURRENCY calls are always under way.
    concurrency = max(1, settings.IMPORT_CONCURRENCY)
    call_slot = threading.BoundedSemaphore(concurrency)
    senders = [_thread(send, f"import-{job_id}-send-{n}") for n in range(2 * concurrency)]
    hashers = [
        _thread(hash_passwords, f"import-{job_id}-hash-{n}")
        for n in range(max(1, settings.IMPORT_HASH_CONCURRENCY))
    ]
    try:
        row_ids = queued_row_ids(job_id)
        renewed = time.monotonic()
        while row_ids and not stop.is_set():
            if to_send.qsize() < PREPARE_BATCH // 2:
                for row in rows_prepare(row_ids[:PREPARE_BATCH]):
                    to_send.put(row)
                row_ids = row_ids[PREPARE_BATCH:]
            else:
                time.sleep(0.02)
            if time.monotonic() - renewed >= HEARTBEAT_SECONDS:
                renewed = time.monotonic()
                if not _job_heartbeat(job_id, token):
                    logger.warning("Import %s: another run took the job over; stopping", job_id)
                    stop.set()
    finally:
        all_prepared.set()
        _wait_renewing(senders, job_id, token, stop)
        for _ in hashers:
            to_hash.put(None)
        _wait_renewing(hashers, job_id, token, stop)


def _yield_cpu_to_senders() -> None:
    """Lower this thread's CPU priority, so hashing runs on what the upstream calls leave."""
    try:
        # On Linux a thread has its own nice value; elsewhere this would renice the whole
        # process, so it is left alone.
        if sys.platform.startswith("linux"):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), HASHING_NICENESS)
    except (AttributeError, OSError):
        pass  # not allowed here: hashing simply competes as an equal


def _thread(target, name: str) -> threading.Thread:
    """Start a daemon thread that closes its own database connection when done.

    It runs in the starting thread's language: a new thread starts in the default one, and the
    reasons it writes for staff must be in the language the job was run in.
    """
    language = translation.get_language()

    def run() -> None:
        try:
            with translation.override(language):
                target()
        finally:
            connection.close()

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


def _wait_renewing(threads: list[threading.Thread], job_id: int, token: str, stop) -> None:
    """Wait for the threads, renewing the hold on the job; on losing it, stop claiming rows."""
    for thread in threads:
        while thread.is_alive():
            thread.join(HEARTBEAT_SECONDS)
            if not stop.is_set() and not _job_heartbeat(job_id, token):
                logger.warning("Import %s: another run took the job over; stopping", job_id)
                stop.set()


# The hold on the job ---------------------------------------------------------------------------


def _job_acquire(job_id: int, token: str) -> bool:
    """Take a running job that no live run holds."""
    now = timezone.now()
    silent_since = now - timedelta(seconds=settings.IMPORT_STALLED_AFTER)
    return bool(
        ImportJob.objects.filter(pk=job_id, state=ImportJob.State.RUNNING)
        .filter(Q(runner="") | Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=silent_since))
        .update(runner=token, heartbeat_at=now, started_at=Coalesce("started_at", now))
    )


def _job_heartbeat(job_id: int, token: str) -> bool:
    """Renew the hold; False if another run has taken the job."""
    return bool(
        ImportJob.objects.filter(pk=job_id, runner=token).update(heartbeat_at=timezone.now())
    )


def _job_release(job_id: int, token: str) -> None:
    try:
        ImportJob.objects.filter(pk=job_id, runner=token).update(runner="")
    except DatabaseError:
        logger.exception("Import %s could not be released", job_id)


def _job_finish_or_release(job_id: int, token: str) -> None:
    """Finish the job when every row is done and ready, else let the next run go on."""
    unfinished = ImportRow.objects.filter(job_id=job_id).filter(
        Q(state__in=[ImportRow.State.QUEUED, ImportRow.State.SENDING])
        | Q(state=ImportRow.State.REGISTERED, signin_ready_at__isnull=True)
    )
    if unfinished.exists():
        _job_release(job_id, token)
        return
    ImportJob.objects.filter(pk=job_id, runner=token, state=ImportJob.State.RUNNING).update(
        state=ImportJob.State.FINISHED, finished_at=timezone.now(), runner=""
    )
    logger.info("Import %s finished", job_id)
