"""One row's way through a bulk registration, each step a conditional update.

A row is prepared (a pending learner and an inactive account, made a batch at a time), claimed
by its task (queued -> sending) just before its call, sent, and recorded as registered or
failed. Its password was hashed while staff read the preview, or is hashed while the call is
under way (imports.hashing), so a registered row's account opens with its outcome; a row
without that hash (its hashing failed, or a row registered before a restart) gets it from a
task of its own afterwards. A row left in "sending" by a worker that died is failed as of
unknown outcome and never sent again. The registration steps themselves are the learners
app's (learners.registration); the tasks that take a row through them are imports.run's.
"""

import logging
from datetime import datetime

from cryptography.fernet import InvalidToken
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.functional import lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.debug import sensitive_variables

from accounts.user_cache import forget_cached_user
from accounts.usernames import username_normal_form
from classes.models import SchoolGroup
from classes.services import group_learners_add
from imports.hashing import hash_meanwhile, hashed_or_none
from imports.models import ImportRow
from imports.passwords import password_decrypt
from imports.tasks import enqueue_row_signin
from learners.models import Learner
from learners.registration import (
    MAYBE_REGISTERED,
    UNUSABLE_ID,
    account_pending,
    learner_activate,
    learner_discard,
    learner_pending,
    learner_save_pending,
    registration_failure,
    stale_registrations_discard,
    upstream_register,
)
from learners.selectors import PENDING_REGISTRATION_STALE_AFTER
from ops.database import DATABASE_TROUBLE, database_back_since, write_when_database_returns
from partner_api import PartnerApiClient, PartnerApiError

logger = logging.getLogger(__name__)

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


@sensitive_variables("password")
def import_row_register(*, row: ImportRow, client: PartnerApiClient) -> bool:
    """Claim a prepared row, register it upstream and record it; return whether it worked.

    The claim is a conditional update from "queued": of two tasks for one row, one sends it.
    The upstream's answer is held through a database outage and recorded once the database is
    back (ops.database); a row in "sending" when the process dies is reported as of unknown
    outcome and never sent again.
    """
    claimed = ImportRow.objects.filter(
        pk=row.pk, state=ImportRow.State.QUEUED, learner=row.learner
    ).update(state=ImportRow.State.SENDING, claimed_at=timezone.now())
    if not claimed:
        return False  # another task has it, it is done, or its local account went away
    hashing = None
    try:
        password = password_decrypt(row.password_encrypted)
        if not row.password_hash:
            # Not hashed while staff read the preview: hashed while the call waits on the
            # upstream (Argon2 leaves the GIL), so the account still opens with the outcome.
            hashing = hash_meanwhile(password)
        created = upstream_register(
            client, username=row.username, password=password, **_row_fields(row)
        )
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
        write_when_database_returns(
            lambda: _row_fail(row, failure), what=f"import row {row.pk}'s failure"
        )
        return False
    hashed = row.password_hash or hashed_or_none(hashing)
    return write_when_database_returns(
        lambda: _row_record_registered(row, created.user_id, hashed),
        what=f"import row {row.pk}'s registration",
    )


@sensitive_variables("password")
def import_row_make_signin_ready(*, row_id: int) -> int | None:
    """Hash a registered row's password into its account and activate it; wipe the copy.

    Returns the row's job if this call made it ready.
    """
    row = (
        ImportRow.objects.select_related("learner")
        .filter(pk=row_id, state=ImportRow.State.REGISTERED, signin_ready_at__isnull=True)
        .first()
    )
    if row is None:
        return None  # ready already (a second task for the row), or not registered
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
            hashed = row.password_hash or make_password(password)  # slow: no lock held
    with transaction.atomic():
        updated = ImportRow.objects.filter(pk=row.pk, signin_ready_at__isnull=True).update(
            **_ready_fields(row, timezone.now())
        )
        if updated and hashed is not None:
            get_user_model().objects.filter(pk=row.learner.user_id).update(
                password=hashed, is_active=True
            )
            forget_cached_user(row.learner.user_id)  # an update sends no signal
    return row.job_id if updated else None


def _ready_fields(row: ImportRow, now: datetime) -> dict:
    """Return what a row ready to sign in records: when, and its kept password wiped."""
    # A generated password waits for its one-time download; any other goes now. The hash is
    # the account's now: no copy stays with the row.
    return {
        "signin_ready_at": now,
        "password_encrypted": row.password_encrypted if row.password_generated else "",
        "password_hash": "",
    }


def rows_prepare(row_ids: list[int]) -> list[ImportRow]:
    """Give each queued row an inactive local account (saved before any call); return them.

    A row whose username was registered in the portal since the file was checked fails here,
    unsent. A row that already has an account (made by the run, or by a run stopped before
    sending it) keeps it.
    """
    rows = list(
        # With whoever confirmed the job: every account names who registered it (a query a
        # row otherwise).
        ImportRow.objects.select_related("job__confirmed_by", "learner")
        .filter(pk__in=row_ids, state=ImportRow.State.QUEUED)
        .order_by("row_number")
    )
    # Fresh again, so the single registration does not take them for leftovers while their
    # call is under way; one made less than half that time ago is left as it is (a query
    # less on every row's way).
    aging = timezone.now() - PENDING_REGISTRATION_STALE_AFTER / 2
    kept = [row.learner_id for row in rows if row.learner and row.learner.registered_at < aging]
    if kept:
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
    normal = {username_normal_form(row.username) for row in rows}
    stale_registrations_discard(normal)  # left by a dead process, as learner_register does
    taken = set(User.objects.filter(username__in=normal).values_list("username", flat=True))
    fresh = []
    for row in rows:
        if username_normal_form(row.username) in taken:
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
                    learner = learner_save_pending(
                        username=row.username,
                        password=None,  # hashed later, off the upstream call's path
                        registered_by=row.job.confirmed_by,
                        school_id=row.school_id or row.job.school_id,
                        **_row_fields(row),
                    )
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
        school_id=row.school_id or row.job.school_id,
        **_row_fields(row),
    )


def _row_fields(row: ImportRow) -> dict:
    """Return what the row says of its learner besides the username."""
    return {
        "dob": row.dob,
        "email": row.email,
        "first_name": row.first_name,
        "last_name": row.last_name,
        "level": row.level,
    }


def _row_fail_unsent(row: ImportRow, reason: str) -> None:
    """Fail a queued row before anything was sent for it."""
    ImportRow.objects.filter(pk=row.pk, state=ImportRow.State.QUEUED).update(
        state=ImportRow.State.FAILED,
        reason=str(reason),
        password_encrypted="",
        password_hash="",
        finished_at=timezone.now(),
    )


def _row_record_registered(row: ImportRow, user_id: str, hashed: str | None = None) -> bool:
    """Record a row the upstream registered and activate its learner; False if unusable.

    With its password `hashed` already, its account opens in the same transaction; without,
    its hashing is queued (import_row_make_signin_ready).
    """
    try:
        with transaction.atomic():
            now = timezone.now()
            # With its hash made, the row is ready to sign in in the same write.
            ready = _ready_fields(row, now) if hashed is not None else {}
            recorded = ImportRow.objects.filter(pk=row.pk, state=ImportRow.State.SENDING).update(
                state=ImportRow.State.REGISTERED, finished_at=now, reason="", **ready
            )
            if not recorded:
                if ImportRow.objects.filter(
                    pk=row.pk, state=ImportRow.State.REGISTERED, learner=row.learner
                ).exists():
                    return True  # by an earlier try, whose commit's reply was lost
                # The sweep took this row's worker for dead and has already called it unknown.
                logger.warning("Import row %s was registered after being given up", row.pk)
                return False
            learner_activate(
                learner=row.learner,
                upstream_user_id=user_id,
                account_ready=hashed is not None,
                password_hash=hashed,
            )
            if row.group_ids:
                _groups_join(row)
            if hashed is None:
                # Written with the outcome, so a registered row always has its hashing to come.
                enqueue_row_signin(row.pk)
    except DATABASE_TROUBLE:
        raise  # the database's trouble, not the id's: the caller holds the answer
    except DatabaseError:
        logger.exception("Import row %s: the upstream's learner id could not be stored", row.pk)
        _row_fail(row, UNUSABLE_ID)
        return False
    return True


def _groups_join(row: ImportRow) -> None:
    """Add the row's new learner to the groups its file named, still current."""
    # A group archived since the file was checked takes nobody in: the learner stays.
    for group in SchoolGroup.objects.current().filter(pk__in=row.group_ids):
        group_learners_add(
            group=group, learners=[row.learner], added_by=row.job.confirmed_by, address=None
        )


def _row_fail(row: ImportRow, reason: str) -> None:
    """Record a failed row, wipe its password and remove its local account."""
    with transaction.atomic():
        ImportRow.objects.filter(pk=row.pk, state=ImportRow.State.SENDING).update(
            state=ImportRow.State.FAILED,
            reason=str(reason),
            password_encrypted="",
            password_hash="",
            learner=None,
            finished_at=timezone.now(),
        )
        if row.learner is not None:
            learner_discard(learner_id=row.learner.pk)


def rows_abandon_left_sending(job_id: int, *, claimed_before: datetime) -> int:
    """Fail the rows claimed before then and still sending: their worker died; never resend.

    The service may have registered them, so they are failed as of unknown outcome. Returns
    how many. A database that came back since then (restarted, or seen by this sweep to stop
    answering and answer again) gives none: a worker holding a row's answer through the outage
    (ops.database) writes it within seconds of its end, so rows are counted from it.
    """
    left = list(
        ImportRow.objects.filter(
            job_id=job_id, state=ImportRow.State.SENDING, claimed_at__lt=claimed_before
        ).values_list("pk", "learner_id")
    )
    back = database_back_since() if left else None
    if back is not None and back >= claimed_before:
        return 0
    abandoned = 0
    for row_id, learner_id in left:
        with transaction.atomic():
            abandoned += ImportRow.objects.filter(
                pk=row_id, state=ImportRow.State.SENDING, claimed_at__lt=claimed_before
            ).update(
                state=ImportRow.State.FAILED,
                reason=str(OUTCOME_UNKNOWN),
                password_encrypted="",
                password_hash="",
                learner=None,
                finished_at=timezone.now(),
            )
            if learner_id is not None:
                learner_discard(learner_id=learner_id)
    if abandoned:
        logger.warning("Import %s: %d rows of unknown outcome not sent again", job_id, abandoned)
    return abandoned


def queued_row_ids(job_id: int) -> list[int]:
    return list(
        ImportRow.objects.filter(job_id=job_id, state=ImportRow.State.QUEUED)
        .order_by("row_number")
        .values_list("pk", flat=True)
    )


def rows_awaiting_signin(job_id: int) -> list[int]:
    return list(
        ImportRow.objects.filter(
            job_id=job_id, state=ImportRow.State.REGISTERED, signin_ready_at__isnull=True
        )
        .order_by("row_number")
        .values_list("pk", flat=True)
    )


def rows_left(job_id: int) -> QuerySet[ImportRow]:
    """Return the job's rows still to send, being sent, or registered but not ready to sign in."""
    return ImportRow.objects.filter(job_id=job_id).filter(
        Q(state__in=[ImportRow.State.QUEUED, ImportRow.State.SENDING])
        | Q(state=ImportRow.State.REGISTERED, signin_ready_at__isnull=True)
    )
