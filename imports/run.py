"""Running a confirmed bulk registration: rows sent upstream a few at a time, passwords hashed
beside them, the whole resumable after the worker dies without ever sending a row twice.

Each row goes: claim it (queued -> sending, a conditional UPDATE, with its local account made
inactive and without a usable password in the same transaction), call the upstream, record the
outcome (registered or failed). A separate small pool then hashes each registered row's
password and activates the account, so the slow hasher never holds up the upstream calls. A
run holds the job through a heartbeat; a run that finds the job held by a silent runner takes
it over and marks the rows left in "sending" as of unknown outcome, never resending them.
"""

import contextlib
import logging
import os
import queue
import secrets
import sys
import threading
import time
from contextlib import AbstractContextManager
from datetime import timedelta

from cryptography.fernet import InvalidToken
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import Q
from django.db.models.functions import Coalesce, Lower
from django.utils import timezone, translation
from django.utils.functional import lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.debug import sensitive_variables

from imports.models import ImportJob, ImportRow
from imports.passwords import password_decrypt
from learners.models import Learner
from learners.registration import (
    MAYBE_REGISTERED,
    UNUSABLE_ID,
    account_pending,
    learner_activate,
    learner_discard,
    learner_pending,
    registration_failure,
    stale_registrations_discard,
    upstream_register,
)
from portal.partner_api import PartnerApiClient, PartnerApiError, get_client

logger = logging.getLogger(__name__)

# How often a run renews its hold on the job; IMPORT_STALLED_AFTER must be well above it.
HEARTBEAT_SECONDS = 2.0
# Local accounts are made this many rows at a time, a batch ahead of the senders.
PREPARE_BATCH = 100
# Hashing threads run at this nice value (Linux): the pipeline's threads, the database and
# the rest of the machine come first.
HASHING_NICENESS = 10

# The reasons a row failed, shown on the progress page and in the result file. They are
# stored as written, in the language the run was started in (imports.tasks): lazy here.


def _outcome_unknown() -> str:
    # Translators: %(maybe_registered)s is the sentences "The service may have registered
    # this learner without confirming it. …".
    return _(
        "Outcome unknown: the portal stopped while this row was being sent, so it was not sent "
        "again. %(maybe_registered)s"
    ) % {"maybe_registered": MAYBE_REGISTERED}


def _unexpected() -> str:
    # Translators: %(maybe_registered)s is the sentences "The service may have registered
    # this learner without confirming it. …".
    return _(
        "Outcome unknown: the portal failed unexpectedly while sending this row. "
        "%(maybe_registered)s"
    ) % {"maybe_registered": MAYBE_REGISTERED}


OUTCOME_UNKNOWN = lazy(_outcome_unknown, str)()
TAKEN_LOCALLY = gettext_lazy(
    "Not sent: the username was registered in the portal after the file was checked. "
    "Choose another username."
)
UNREADABLE_PASSWORD = gettext_lazy(
    "Not sent: the password kept for this row could no longer be read (the portal's secret "
    "key changed since the file was checked). Include the row in a new file."
)
UNEXPECTED = lazy(_unexpected, str)()


def import_job_run(*, job_id: int) -> None:
    """Register the job's queued rows and make them ready to sign in; no-op if held elsewhere."""
    token = secrets.token_hex(16)
    if not _job_acquire(job_id, token):
        logger.info("Import %s is not running or another run holds it", job_id)
        return
    try:
        _abandon_rows_left_sending(job_id)
        if connection.in_atomic_block:
            # Other threads could not see this transaction's rows: send them one by one here.
            _run_inline(job_id)
        else:
            _run_threaded(job_id, token)
        _job_finish_or_release(job_id, token)
    except BaseException:
        _job_release(job_id, token)  # let a resume take over at once
        raise


def import_row_register(
    *, row: ImportRow, client: PartnerApiClient, call_slot: AbstractContextManager | None = None
) -> bool:
    """Claim a prepared row, register it upstream and record it; return whether it worked.

    `call_slot` (a semaphore) is held around the claim and the upstream call: the calls in
    flight stay within the limit while other threads write outcomes. A row in "sending" when
    the process dies is reported as of unknown outcome and never sent again.
    """
    # The slot comes first: a row is claimed only when its call can start, so a run that
    # dies leaves in "sending" only rows that may really have been sent.
    with call_slot or contextlib.nullcontext():
        claimed = ImportRow.objects.filter(
            pk=row.pk, state=ImportRow.State.QUEUED, learner=row.learner
        ).update(state=ImportRow.State.SENDING, claimed_at=timezone.now())
        if not claimed:
            return False  # another run has it, it is done, or its local account went away
        try:
            created = _create_upstream(row, client)
        except InvalidToken:
            failure = UNREADABLE_PASSWORD  # raised before anything was sent
        except PartnerApiError as error:
            logger.info("Import row %s failed upstream: %s", row.pk, error)
            failure = registration_failure(error).row_reason
        except Exception:
            logger.exception("Import row %s failed unexpectedly while being sent", row.pk)
            failure = UNEXPECTED
        else:
            failure = None
    if failure is not None:
        _row_fail(row, failure)
        return False
    return _row_record_registered(row, created.user_id)


@sensitive_variables("password")
def import_row_make_signin_ready(*, row_id: int) -> None:
    """Hash a registered row's password into its account and activate it; wipe the copy."""
    row = (
        ImportRow.objects.select_related("learner")
        .filter(pk=row_id, state=ImportRow.State.REGISTERED, signin_ready_at__isnull=True)
        .first()
    )
    if row is None:
        return
    hashed = None
    if row.learner is not None and row.password_encrypted:
        try:
            password = password_decrypt(row.password_encrypted)
        except InvalidToken:
            # The secret key changed: no one can sign in with an unusable password until
            # staff reset it from the learner's page.
            logger.warning("Import row %s: password unreadable; reset it from the page", row.pk)
            hashed = make_password(None)
        else:
            hashed = make_password(password)  # slow: no lock held
    with transaction.atomic():
        updated = ImportRow.objects.filter(pk=row.pk, signin_ready_at__isnull=True).update(
            signin_ready_at=timezone.now(),
            # A generated password waits for its one-time download; any other goes now.
            password_encrypted=row.password_encrypted if row.password_generated else "",
        )
        if updated and hashed is not None:
            get_user_model().objects.filter(pk=row.learner.user_id).update(
                password=hashed, is_active=True
            )


# The run ---------------------------------------------------------------------------------------


def _run_inline(job_id: int) -> None:
    """Send and then ready each queued row in this thread."""
    client = get_client()
    row_ids = _queued_row_ids(job_id)
    for first in range(0, len(row_ids), PREPARE_BATCH):
        for row in _rows_prepare(row_ids[first : first + PREPARE_BATCH]):
            import_row_register(row=row, client=client)
    for row_id in _rows_awaiting_signin(job_id):
        import_row_make_signin_ready(row_id=row_id)


def _run_threaded(job_id: int, token: str) -> None:
    """Send rows with IMPORT_CONCURRENCY threads and hash beside them, renewing the hold.

    This thread makes the local accounts a batch ahead of the senders (one bulk insert per
    batch instead of several queries per row on the senders' path) and renews the hold.
    """
    client = get_client()
    to_send: queue.Queue[ImportRow] = queue.Queue()
    to_hash: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    for row_id in _rows_awaiting_signin(job_id):
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
        row_ids = _queued_row_ids(job_id)
        renewed = time.monotonic()
        while row_ids and not stop.is_set():
            if to_send.qsize() < PREPARE_BATCH // 2:
                for row in _rows_prepare(row_ids[:PREPARE_BATCH]):
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


# Rows ------------------------------------------------------------------------------------------


def _rows_prepare(row_ids: list[int]) -> list[ImportRow]:
    """Give each queued row an inactive local account (saved before any call); return them.

    A row whose username was registered in the portal since the file was checked fails here,
    unsent. A row that already has an account (a run stopped before sending it) keeps it.
    """
    rows = list(
        ImportRow.objects.select_related("job", "learner")
        .filter(pk__in=row_ids, state=ImportRow.State.QUEUED)
        .order_by("row_number")
    )
    kept = [row.learner_id for row in rows if row.learner_id is not None]
    if kept:
        # Fresh again, so the single registration does not take them for leftovers.
        Learner.objects.filter(pk__in=kept, status=Learner.Status.PENDING).update(
            registered_at=timezone.now()
        )
    without = [row for row in rows if row.learner_id is None]
    if without:
        _accounts_create(without)
    return [row for row in rows if row.learner is not None]


def _accounts_create(rows: list[ImportRow]) -> None:
    """Make the rows' pending learners and inactive accounts in one go (or one by one)."""
    User = get_user_model()
    lowered = {row.username.lower() for row in rows}
    stale_registrations_discard(lowered)  # left by a dead process, as learner_register does
    taken = set(
        User.objects.annotate(lowered=Lower("username"))
        .filter(lowered__in=lowered)
        .values_list("lowered", flat=True)
    )
    fresh = []
    for row in rows:
        if row.username.lower() in taken:
            _row_fail_unsent(row, TAKEN_LOCALLY)
        else:
            fresh.append(row)
    try:
        with transaction.atomic():
            users = User.objects.bulk_create([_account_pending(row) for row in fresh])
            learners = Learner.objects.bulk_create(
                [_learner_pending(row, user) for row, user in zip(fresh, users, strict=True)]
            )
            for row, learner in zip(fresh, learners, strict=True):
                row.learner = learner
            ImportRow.objects.bulk_update(fresh, ["learner"])
    except IntegrityError:
        # One of the usernames was registered at this very moment: find it one by one.
        for row in fresh:
            row.learner = None
            try:
                with transaction.atomic():
                    user = _account_pending(row)
                    user.save()
                    learner = _learner_pending(row, user)
                    learner.save()
                    ImportRow.objects.filter(pk=row.pk).update(learner=learner)
                row.learner = learner
            except IntegrityError:
                row.learner = None
                _row_fail_unsent(row, TAKEN_LOCALLY)


def _account_pending(row: ImportRow):
    """Return the row's unsaved account, without a password: it is hashed off the call's path."""
    return account_pending(username=row.username, password=None)


def _learner_pending(row: ImportRow, user) -> Learner:
    """Return the row's unsaved pending learner, registered by whoever confirmed the file."""
    return learner_pending(
        user=user,
        username=row.username,
        registered_by=row.job.confirmed_by,
        dob=row.dob,
        email=row.email,
        first_name=row.first_name,
        last_name=row.last_name,
        level=row.level,
    )


def _row_fail_unsent(row: ImportRow, reason: str) -> None:
    """Fail a queued row before anything was sent for it."""
    ImportRow.objects.filter(pk=row.pk, state=ImportRow.State.QUEUED).update(
        state=ImportRow.State.FAILED,
        reason=str(reason),
        password_encrypted="",
        finished_at=timezone.now(),
    )


@sensitive_variables("password")
def _create_upstream(row: ImportRow, client: PartnerApiClient):
    """Call create-learner for the row with its decrypted password."""
    password = password_decrypt(row.password_encrypted)
    return upstream_register(
        client,
        username=row.username,
        password=password,
        dob=row.dob,
        email=row.email,
        first_name=row.first_name,
        last_name=row.last_name,
        level=row.level,
    )


def _row_record_registered(row: ImportRow, user_id: str) -> bool:
    """Record a row the upstream registered and activate its learner; False if unusable."""
    try:
        with transaction.atomic():
            recorded = ImportRow.objects.filter(pk=row.pk, state=ImportRow.State.SENDING).update(
                state=ImportRow.State.REGISTERED, finished_at=timezone.now(), reason=""
            )
            if not recorded:
                # A run that took the job over has already called this row unknown.
                logger.warning("Import row %s was registered after being given up", row.pk)
                return False
            # The account opens once its password is hashed (import_row_make_signin_ready).
            learner_activate(learner=row.learner, upstream_user_id=user_id, account_ready=False)
    except DatabaseError:
        logger.exception("Import row %s: the upstream's learner id could not be stored", row.pk)
        _row_fail(row, UNUSABLE_ID)
        return False
    return True


def _row_fail(row: ImportRow, reason: str) -> None:
    """Record a failed row, wipe its password and remove its local account."""
    with transaction.atomic():
        ImportRow.objects.filter(pk=row.pk, state=ImportRow.State.SENDING).update(
            state=ImportRow.State.FAILED,
            reason=str(reason),
            password_encrypted="",
            learner=None,
            finished_at=timezone.now(),
        )
        if row.learner is not None:
            learner_discard(learner_id=row.learner.pk)


def _abandon_rows_left_sending(job_id: int) -> None:
    """Fail the rows a dead run left in sending: they may have been registered; never resend."""
    left = list(
        ImportRow.objects.filter(job_id=job_id, state=ImportRow.State.SENDING).values_list(
            "pk", "learner_id"
        )
    )
    for row_id, learner_id in left:
        with transaction.atomic():
            ImportRow.objects.filter(pk=row_id, state=ImportRow.State.SENDING).update(
                state=ImportRow.State.FAILED,
                reason=str(OUTCOME_UNKNOWN),
                password_encrypted="",
                learner=None,
                finished_at=timezone.now(),
            )
            if learner_id is not None:
                learner_discard(learner_id=learner_id)
    if left:
        logger.warning("Import %s resumed: %d rows of unknown outcome not sent", job_id, len(left))


def _queued_row_ids(job_id: int) -> list[int]:
    return list(
        ImportRow.objects.filter(job_id=job_id, state=ImportRow.State.QUEUED)
        .order_by("row_number")
        .values_list("pk", flat=True)
    )


def _rows_awaiting_signin(job_id: int) -> list[int]:
    return list(
        ImportRow.objects.filter(
            job_id=job_id, state=ImportRow.State.REGISTERED, signin_ready_at__isnull=True
        )
        .order_by("row_number")
        .values_list("pk", flat=True)
    )


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
