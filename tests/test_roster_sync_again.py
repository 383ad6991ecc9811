"""Roster syncs taken one after another through the real path: read, planned, applied.

Real files (tests/roster_files.py) go through `roster_sync_start` with the pupils registered
against the sandbox: the same files again, a delta after a bulk, a late older delta, two held
syncs approved in turn, and a users.csv with rows whose id could not be read.
"""

from dataclasses import replace

import pytest

from audit.models import AuditEvent
from classes.models import GroupMembership
from imports.models import ImportJob
from learners.models import Learner
from roster.models import RosterClass, RosterPerson, RosterSync
from roster.services import RosterSyncClosed, roster_sync_approve, roster_sync_start
from tests.roster_files import Pupil, roster_write, school_spec

DELTA_USERS = {"users": "delta", "demographics": "delta", "enrollments": "absent",
               "classes": "absent", "courses": "absent"}  # fmt: skip


def sync_files(spec, path, **kwargs) -> RosterSync:
    """Sync a roster written from `spec` through the real path, as the drop folder does."""
    return roster_sync_start(
        source=roster_write(spec, path), origin=RosterSync.Origin.DROP, filename=path.name,
        **kwargs,
    )  # fmt: skip


def counts(sync: RosterSync) -> tuple[str, int, int, int, int]:
    return sync.state, sync.joined, sync.left, sync.changed, sync.problems


def delta_of(spec, *pupils: Pupil):
    """Return a delta of users.csv holding only these pupils' rows."""
    return replace(spec, pupils=list(pupils), teachers=[], classes=[], enrolments=[],
                   modes=DELTA_USERS)  # fmt: skip


@pytest.fixture
def bulk(upstream, tmp_path):
    """A school's first bulk roster, applied: 20 pupils in 2 classes, 2 teachers."""
    spec = school_spec(code="SCHOOL", pupils=20, classes=2)
    sync = sync_files(spec, tmp_path / "bulk")
    assert counts(sync) == ("applied", 20, 0, 0, 0)
    return spec


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_the_same_bulk_files_again_change_nothing(bulk, tmp_path):
    events = AuditEvent.objects.count()
    jobs = ImportJob.objects.count()
    places = GroupMembership.objects.filter(left_at__isnull=True).count()
    assert jobs == 1 and places == 40  # a class and a year group each

    again = sync_files(bulk, tmp_path / "again")

    assert counts(again) == ("applied", 0, 0, 0, 0)
    # Every person applied keeps their row's date: teachers too, so a late delta is known.
    assert RosterPerson.objects.filter(role="teacher").count() == 2
    assert not RosterPerson.objects.filter(last_modified__isnull=True).exists()
    new = AuditEvent.objects.order_by("pk")[events:]
    assert [event.action for event in new] == [AuditEvent.Action.ROSTER_SYNCED]
    assert ImportJob.objects.count() == jobs
    assert GroupMembership.objects.filter(left_at__isnull=True).count() == places


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_a_delta_after_a_bulk_moves_a_pupil_and_again_changes_nothing(bulk, tmp_path):
    pupil = bulk.pupils[0]
    first, second = bulk.classes[0].sourced_id, bulk.classes[1].sourced_id
    was_in = next(klass for klass, person, _role in bulk.enrolments if person == pupil.sourced_id)
    to = second if was_in == first else first
    later = "2026-09-10T08:00:00.000Z"
    delta = replace(
        delta_of(bulk, replace(pupil, family_name="Moved", modified=later)),
        enrolments=[(was_in, pupil.sourced_id, "student", "tobedeleted"),
                    (to, pupil.sourced_id, "student", "active")],
        modes={**DELTA_USERS, "enrollments": "delta"},
    )  # fmt: skip

    sync = sync_files(delta, tmp_path / "delta")

    assert counts(sync) == ("applied", 0, 0, 1, 0)
    learner = Learner.objects.get(roster_person__sourced_id=pupil.sourced_id)
    assert learner.last_name == "Moved"
    groups = GroupMembership.objects.filter(learner=learner, left_at__isnull=True)
    target = RosterClass.objects.get(sourced_id=to).group
    assert target.pk in set(groups.values_list("group_id", flat=True))
    assert not groups.filter(group__roster_class__sourced_id=was_in).exists()
    events = AuditEvent.objects.count()

    again = sync_files(delta, tmp_path / "delta-again")

    assert counts(again) == ("applied", 0, 0, 0, 0)
    assert AuditEvent.objects.count() == events + 1  # the sync's own line only


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_an_older_delta_taken_after_a_newer_one_does_not_bring_a_leaver_back(bulk, tmp_path):
    pupil = bulk.pupils[0]
    newer = delta_of(bulk, replace(pupil, status="tobedeleted", modified="2026-09-10T08:00:00Z"))
    older = delta_of(bulk, replace(pupil, modified="2026-09-05T08:00:00Z"))

    left = sync_files(newer, tmp_path / "newer")
    assert counts(left) == ("applied", 0, 1, 0, 0)
    learner = Learner.objects.get(roster_person__sourced_id=pupil.sourced_id)
    assert learner.left_at is not None
    assert RosterPerson.objects.get(sourced_id=pupil.sourced_id).last_modified.day == 10

    late = sync_files(older, tmp_path / "older")

    assert counts(late) == ("applied", 0, 0, 0, 0)
    learner.refresh_from_db()
    assert learner.left_at is not None and not learner.user.is_active


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("first", [0, 1], ids=["oldest-first", "newest-first"])
def test_of_two_held_syncs_only_the_first_approved_applies(bulk, tmp_path, staff, first):
    # Each bulk lacks a different four of the 20 pupils (20%): each is held.
    ids = [pupil.sourced_id for pupil in bulk.pupils]
    held = [
        sync_files(bulk.without(*ids[:4]), tmp_path / "one"),
        sync_files(bulk.without(*ids[4:8]), tmp_path / "two"),
    ]
    assert [sync.state for sync in held] == [RosterSync.State.HELD] * 2
    approved, other = held[first], held[1 - first]

    roster_sync_approve(sync=approved, approved_by=staff, address=None)
    with pytest.raises(RosterSyncClosed, match="Another sync was applied after this one was read"):
        roster_sync_approve(sync=other, approved_by=staff, address=None)

    assert Learner.objects.filter(left_at__isnull=False).count() == 4
    other.refresh_from_db()
    assert other.state == RosterSync.State.HELD


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_a_users_row_without_an_id_makes_nobody_leave_and_holds_the_sync(bulk, tmp_path):
    nameless = replace(bulk.pupils[1], sourced_id="", username="no.id")
    # Pupil 0 is missing: perhaps the row whose id was lost, so they must not leave.
    short = replace(bulk.without(bulk.pupils[0].sourced_id), pupils=[*bulk.pupils[1:], nameless])

    sync = sync_files(short, tmp_path / "blank-id")

    assert sync.state == RosterSync.State.HELD, sync.summary_line()
    assert sync.left == 0 and sync.problems >= 1
    assert any(
        "users.csv has 1 row that could not be read, so nobody is counted as leaving" in reason
        for reason in sync.hold_reasons
    ), sync.hold_reasons
    assert not Learner.objects.filter(left_at__isnull=False).exists()
