"""Roster syncs from files to applied: read, planned, held or applied at once, approved, discarded.

One sync plans and applies at a time in the whole deployment (a write to the one RosterLock
row, in the transaction that plans and applies): two drop-folder files never interleave, and
each plans from what the one before it left. A held sync applies exactly the plan its preview
showed, once, however many clicks approve it.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from audit.models import AuditEvent
from audit.services import audit_record
from ops.database import DATABASE_TROUBLE
from roster.applying import plan_apply
from roster.joining import roster_links_settle
from roster.models import RosterLock, RosterSync
from roster.plan import SyncPlan
from roster.planning import plan_sync
from roster.reading import read_roster
from roster.records import RosterFileSet, RosterUnreadable
from roster.tasks import enqueue_approved_apply
from schools.context import working_in
from schools.models import School

logger = logging.getLogger(__name__)

State = RosterSync.State

# Translators: Why a roster sync failed when the portal itself went wrong.
FAILED_UNEXPECTEDLY = gettext_lazy(
    "The portal failed unexpectedly while working out this sync; nothing changed. Try again "
    "later; if it fails again, tell the portal's administrators."
)
# Two held syncs were both read from what the portal held then: once one is applied, the
# other's plan is out of date.
STALE = gettext_lazy(
    "Another sync was applied after this one was read; upload the files again to see what "
    "they change now."
)


class _Overtaken(Exception):
    """The sync left the state this run expected (failed by the sweep meanwhile): give up."""


class RosterSyncClosed(Exception):
    """The sync cannot be approved or discarded (it is not held); the message says why."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def roster_sync_start(
    *,
    source,
    origin: str,
    filename: str = "",
    school: School | None = None,
    started_by: AbstractBaseUser | None = None,
    address: str | None = None,
) -> RosterSync:
    """Read a roster, plan its effect and apply it at once, or hold it for an admin.

    `source` is what roster.reading reads (a folder, a zip's path or an uploaded file). A
    roster that cannot be read, or a failure of the portal's, gives a failed sync saying why.
    """
    sync = RosterSync.objects.create(
        origin=origin, filename=filename[:255], school=school, created_by=started_by,
        started_at=timezone.now(),
    )  # fmt: skip
    return roster_sync_run(sync, source, actor=started_by, address=address)


def roster_sync_run(
    sync: RosterSync, source, *, actor: AbstractBaseUser | None, address: str | None
) -> RosterSync:
    """Read, plan and hold or apply a sync being read; never left "being read" by an error.

    A database outage is raised on (after marking the sync failed, if the database lets it),
    for the caller to wait it out; any other error of the portal's fails the sync, logged.
    """
    done = False
    try:
        try:
            files = read_roster(source, max_bytes=settings.ROSTER_MAX_UPLOAD_BYTES)
        except RosterUnreadable as error:
            _fail(sync, str(error))
            logger.info("Roster sync %s could not be read: %s", sync.pk, error)
        else:
            with working_in(sync.school_id), transaction.atomic():
                _plan_and_apply(sync, files, school=sync.school, actor=actor, address=address)
        done = True
    except _Overtaken:
        # Rolled back whole: the sweep failed it meanwhile, and what it says stands.
        done = True
        logger.warning("Roster sync %s was failed by the sweep while being read", sync.pk)
    except DATABASE_TROUBLE:
        logger.exception("Roster sync %s failed: the database is out of reach", sync.pk)
        raise
    except Exception:
        # Rolled back whole: nothing changed. Logged with its traceback, which may hold
        # pupils' details: the sync itself says only that the portal failed.
        logger.exception("Roster sync %s failed while read, planned or applied", sync.pk)
    finally:
        if not done:
            _fail(sync, str(FAILED_UNEXPECTEDLY))
    sync.refresh_from_db()
    logger.info("%s", sync.summary_line())
    return sync


def _fail(sync: RosterSync, reason: str) -> None:
    """Mark a sync still being read as failed, saying why (no-op if the database is gone)."""
    try:
        RosterSync.objects.filter(pk=sync.pk, state=State.READING).update(
            state=State.FAILED, error=reason
        )
    except DATABASE_TROUBLE:
        logger.warning("Roster sync %s could not be marked failed: no database", sync.pk)


def _plan_and_apply(
    sync: RosterSync,
    files: RosterFileSet,
    *,
    school: School | None,
    actor: AbstractBaseUser | None,
    address: str | None,
) -> None:
    """Plan the files under the lock, then hold the sync or apply it (the caller's transaction)."""
    _lock_take(sync)
    if not RosterSync.objects.filter(pk=sync.pk, state=State.READING).exists():
        return  # failed meanwhile by sweep_roster (its worker looked dead): left as it is
    planned_at = timezone.now()  # every sync applied before this moment is in the plan
    roster_links_settle()  # pupils registered since the last sync are theirs now
    plan = plan_sync(files, school=school)
    plan.planned_at = planned_at.isoformat()
    _plan_keep(sync, files, plan)
    if plan.held:
        _move(sync, State.READING, State.HELD)
        audit_record(
            actor=actor,
            address=address,
            action=AuditEvent.Action.ROSTER_HELD,
            **_figures(sync),
            reasons=len(sync.hold_reasons),
        )
    else:
        _apply(sync, actor=actor, address=address)


def roster_sync_approve(
    *,
    sync: RosterSync,
    approved_by: AbstractBaseUser | None,
    address: str | None,
    at_once: bool = True,
) -> RosterSync:
    """Apply a held sync's plan, as previewed (audited); raise RosterSyncClosed if not held.

    With `at_once` off (the page), a worker applies it: a trust's plan may take longer than
    the web server gives a request. The command applies it at once, to print its outcome.
    """
    with working_in(sync.school_id), transaction.atomic():
        _lock_take(sync)  # a second click waits here, then finds it applied
        sync.refresh_from_db()
        if sync.state != State.HELD:
            raise RosterSyncClosed(_closed(sync))
        if _applied_since(sync):
            raise RosterSyncClosed(str(STALE))
        claimed = RosterSync.objects.filter(pk=sync.pk, state=State.HELD).update(
            state=State.APPLYING, decided_by=approved_by, decided_at=timezone.now()
        )
        if not claimed:
            raise RosterSyncClosed(_closed(sync))
        sync.refresh_from_db()
        audit_record(
            actor=approved_by,
            address=address,
            action=AuditEvent.Action.ROSTER_APPROVED,
            **_figures(sync),
        )
        if at_once:
            _apply(sync, actor=approved_by, address=address)
        else:
            # Written in this transaction (the database queue): the worker finds it applying.
            enqueue_approved_apply(sync.pk, address)
    sync.refresh_from_db()
    return sync


def roster_sync_resume(*, sync: RosterSync, address: str | None = None) -> RosterSync:
    """Apply the plan of a sync approved for a worker, or whose worker died applying it.

    Applying is idempotent, and the lock makes a second worker wait for the first, then find
    nothing left. A sync applied since this one was read makes its plan out of date: failed
    (audited). A database outage is raised on, for the caller to try again; any other error
    fails the sync, logged, so that it is never left being applied.
    """
    try:
        with working_in(sync.school_id), transaction.atomic():
            _lock_take(sync)  # a worker still applying it finishes first; then nothing is left
            if RosterSync.objects.filter(pk=sync.pk, state=State.APPLYING).exists():
                sync.refresh_from_db()
                if _applied_since(sync):
                    _stale_fail(sync, address=address)
                else:
                    _apply(sync, actor=sync.decided_by, address=address)
    except DATABASE_TROUBLE:
        logger.exception("Roster sync %s failed: the database is out of reach", sync.pk)
        raise
    except Exception:
        # Rolled back whole: nothing changed. The traceback may hold pupils' details.
        logger.exception("Roster sync %s failed while applied", sync.pk)
        with transaction.atomic():
            RosterSync.objects.filter(pk=sync.pk, state=State.APPLYING).update(
                state=State.FAILED, error=str(FAILED_UNEXPECTEDLY)
            )
    sync.refresh_from_db()
    return sync


def _stale_fail(sync: RosterSync, *, address: str | None) -> None:
    """Fail an approved sync whose plan another applied sync made out of date (audited)."""
    _move(sync, State.APPLYING, State.FAILED, error=str(STALE))
    audit_record(actor=sync.decided_by, address=address, action=AuditEvent.Action.ROSTER_STALE,
                 **_figures(sync))  # fmt: skip


def roster_sync_discard(
    *, sync: RosterSync, discarded_by: AbstractBaseUser | None, address: str | None
) -> RosterSync:
    """Drop a held sync, changing nothing (audited); raise RosterSyncClosed if not held."""
    with working_in(sync.school_id), transaction.atomic():
        discarded = RosterSync.objects.filter(pk=sync.pk, state=State.HELD).update(
            state=State.DISCARDED, decided_by=discarded_by, decided_at=timezone.now()
        )
        sync.refresh_from_db()
        if not discarded:
            raise RosterSyncClosed(_closed(sync))
        audit_record(
            actor=discarded_by,
            address=address,
            action=AuditEvent.Action.ROSTER_DISCARDED,
            **_figures(sync),
        )
    return sync


def _applied_since(sync: RosterSync) -> bool:
    """Return whether a sync touching any of this one's schools was applied since it was planned.

    Whichever was read first: two held syncs were both planned from what the portal held
    then, so once one is applied the other's plan is out of date. A sync planned before its
    schools were recorded counts every later one (its own school's, if limited to one).
    """
    planned = sync.plan.get("planned_at", "") if isinstance(sync.plan, dict) else ""
    since = datetime.fromisoformat(planned) if planned else sync.created_at
    later = RosterSync.objects.filter(applied_at__gt=since).exclude(pk=sync.pk)
    touched = sync.schools.all()
    if touched.exists():
        later = later.filter(schools__in=touched)
    elif sync.school_id is not None:
        later = later.filter(Q(school__isnull=True) | Q(school_id=sync.school_id))
    return later.exists()


def _lock_take(sync: RosterSync) -> None:
    """Wait for any other sync planning or applying, then hold the lock to this transaction's end.

    An UPDATE, not SELECT ... FOR UPDATE: it takes the row lock on PostgreSQL and the write
    lock on SQLite alike.
    """
    taken = {"taken_at": timezone.now(), "taken_by_sync": sync.pk}
    # The write comes first: on SQLite a transaction that read before writing could not wait
    # for the lock, only fail.
    if not RosterLock.objects.filter(pk=1).update(**taken):
        RosterLock.objects.get_or_create(pk=1)  # the deployment's first sync
        RosterLock.objects.filter(pk=1).update(**taken)


def _plan_keep(sync: RosterSync, files: RosterFileSet, plan: SyncPlan) -> None:
    """Store the plan, its counts and why it is held on the sync (the preview reads these)."""
    reasons = list(plan.hold_reasons) + [
        f"{school.name}: {reason}" for school in plan.schools for reason in school.hold_reasons
    ]
    sync.version, sync.modes, sync.plan = files.version, dict(files.modes), plan.to_json()
    sync.hold_reasons = reasons
    sync.joined, sync.left, sync.changed = plan.joined, plan.left, plan.changed
    sync.problems, sync.school_figures = len(plan.problems), plan.school_figures()
    sync.save(
        update_fields=[
            "version", "modes", "plan", "hold_reasons", "joined", "left", "changed", "problems",
            "school_figures",
        ]
    )  # fmt: skip
    sync.schools.set([school.school_id for school in plan.schools])


def _move(sync: RosterSync, expected: str | tuple[str, ...], state: str, **fields: object) -> None:
    """Write the sync's new state only if it is still in `expected`; else raise _Overtaken.

    The sweep may fail a sync being read while its worker waited for the lock: a later write
    must never overwrite that with held or applied (the caller's transaction rolls back).
    """
    states = [expected] if isinstance(expected, str) else list(expected)
    if not RosterSync.objects.filter(pk=sync.pk, state__in=states).update(state=state, **fields):
        raise _Overtaken(sync.pk)


def _apply(sync: RosterSync, *, actor: AbstractBaseUser | None, address: str | None) -> None:
    """Apply the sync's plan and record the outcome, in the caller's (locked) transaction."""
    _move(sync, (State.READING, State.APPLYING), State.APPLYING)
    plan_apply(sync=sync, actor=actor, address=address)
    _move(sync, State.APPLYING, State.APPLIED, applied_at=timezone.now())
    audit_record(actor=actor, address=address, action=AuditEvent.Action.ROSTER_SYNCED,
                 **_figures(sync))  # fmt: skip


def _figures(sync: RosterSync) -> dict[str, int]:
    """Return what the audit trail keeps of a sync: its number and counts, never names."""
    return {
        "roster_sync": sync.pk,
        "joined": sync.joined,
        "left": sync.left,
        "changed": sync.changed,
        "problems": sync.problems,
    }


def _closed(sync: RosterSync) -> str:
    """Return why a sync that is not held cannot be approved or discarded."""
    if sync.state == State.APPLIED:
        return _("Roster sync %(number)s was applied already: there is nothing to approve.") % {
            "number": sync.pk
        }
    if sync.state == State.DISCARDED:
        return _("Roster sync %(number)s was discarded. Send its files again to sync them.") % {
            "number": sync.pk
        }
    if sync.state == State.FAILED and sync.decided_at:
        return _("Roster sync %(number)s was approved but could not be applied: %(why)s") % {
            "number": sync.pk,
            "why": sync.error,
        }
    if sync.state == State.FAILED:
        return _("Roster sync %(number)s could not be read, so nothing of it can be applied.") % {
            "number": sync.pk
        }
    return _("Roster sync %(number)s is not held for an admin: it is %(state)s.") % {
        "number": sync.pk,
        "state": sync.get_state_display().lower(),
    }
