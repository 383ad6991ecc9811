"""A roster sync from OneRoster files to the portal: the command, holding, approving, discarding.

Real files (tests/roster_files.py) go through the whole path: read (roster.reading), planned
(roster.planning), then applied at once or held (roster.services), with the pupils registered
against the sandbox over HTTP.
"""

import io
import re
import threading
from dataclasses import replace
from datetime import date

import pytest
from django.core.management import CommandError, call_command
from django.db import DataError, OperationalError, connections
from django.utils import timezone

from audit.models import AuditEvent
from classes.models import GroupMembership, GroupStaff
from learners.models import Learner, Level
from roster.models import RosterClass, RosterSync
from roster.plan import YEAR_GROUP_PREFIX, Leaver, SchoolPlan, SyncPlan
from roster.services import (
    RosterSyncClosed,
    roster_sync_approve,
    roster_sync_discard,
    roster_sync_start,
)
from schools.models import School
from tests.factories import make_learner
from tests.roster_files import Klass, Term, roster_write, school_spec, trust_spec

Action = AuditEvent.Action
LINE = re.compile(
    r"^roster sync (\d+): (applied|held): (\d+) joined, (\d+) left, (\d+) changed, "
    r"(\d+) problems$"
)


def sync_command(*args: str) -> tuple[RosterSync, tuple[str, int, int, int, int]]:
    """Run `roster_sync` and return the sync it names and its one line's outcome and counts."""
    out = io.StringIO()
    call_command("roster_sync", *args, stdout=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1, lines
    match = LINE.match(lines[0])
    assert match, lines[0]
    number, outcome, *counts = match.groups()
    return RosterSync.objects.get(pk=int(number)), (outcome, *map(int, counts))


def creations(upstream) -> int:
    return upstream.state.count(endpoint="create-learner")


@pytest.fixture
def bulk_applied(upstream, tmp_path):
    """A school's first bulk roster, applied by the command: 20 pupils, 2 classes, 2 teachers."""
    spec = school_spec(code="SCHOOL", pupils=20, classes=2)
    sync, line = sync_command(str(roster_write(spec, tmp_path / "bulk")))
    assert line == ("applied", 20, 0, 0, 0)
    return spec


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_a_bulk_roster_registers_its_pupils_once_with_classes_and_teachers(
    bulk_applied, upstream, tmp_path
):
    assert creations(upstream) == 20
    assert Learner.objects.filter(status=Learner.Status.ACTIVE, left_at__isnull=True).count() == 20
    classes = RosterClass.objects.exclude(sourced_id__startswith=YEAR_GROUP_PREFIX)
    groups = [link.group for link in classes.order_by("sourced_id")]
    assert [group.name for group in groups] == ["07A", "07B"]
    assert GroupMembership.objects.filter(group__in=groups, left_at__isnull=True).count() == 20
    assert GroupStaff.objects.filter(group__in=groups).count() == 2
    assert AuditEvent.objects.filter(action=Action.ROSTER_SYNCED).count() == 1

    # The same files again: nothing changes, nobody is sent twice.
    _sync, line = sync_command(str(roster_write(bulk_applied, tmp_path / "again", as_zip=True)))

    assert line == ("applied", 0, 0, 0, 0)
    assert creations(upstream) == 20


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_a_delta_applies_a_leaver_and_a_change(bulk_applied, upstream, tmp_path):
    gone, renamed = bulk_applied.pupils[0], bulk_applied.pupils[1]
    later = "2026-10-01T08:00:00.000Z"
    delta = replace(
        bulk_applied,
        pupils=[
            replace(gone, status="tobedeleted", modified=later),
            replace(renamed, family_name="Newname", modified=later),
        ],
        teachers=[],
        classes=[],
        enrolments=[],
        modes={"users": "delta", "demographics": "delta", "enrollments": "absent",
               "classes": "absent", "courses": "absent"},
    )  # fmt: skip

    _sync, line = sync_command(str(roster_write(delta, tmp_path / "delta")))

    assert line == ("applied", 0, 1, 1, 0)
    left = Learner.objects.get(username=gone.login)
    assert left.left_at is not None and not left.user.is_active
    assert Learner.objects.get(username=renamed.login).last_name == "Newname"
    assert creations(upstream) == 20


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_a_bulk_missing_40_percent_is_held_until_approved(bulk_applied, upstream, tmp_path):
    missing = [pupil.sourced_id for pupil in bulk_applied.pupils[:8]]
    files = roster_write(bulk_applied.without(*missing), tmp_path / "short")

    sync, line = sync_command(str(files))

    assert line == ("held", 0, 8, 0, 0)
    assert sync.state == RosterSync.State.HELD and sync.hold_reasons
    assert not Learner.objects.filter(left_at__isnull=False).exists()  # nothing changed yet
    assert AuditEvent.objects.filter(action=Action.ROSTER_HELD).count() == 1

    approved, line = sync_command("--approve", str(sync.pk))

    assert approved == sync and line == ("applied", 0, 8, 0, 0)
    assert Learner.objects.filter(left_at__isnull=False).count() == 8
    assert AuditEvent.objects.filter(action=Action.ROSTER_APPROVED).count() == 1
    with pytest.raises(CommandError, match=f"Roster sync {sync.pk} was applied already"):
        call_command("roster_sync", "--approve", str(sync.pk), stdout=io.StringIO())
    assert Learner.objects.filter(left_at__isnull=False).count() == 8


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_a_held_sync_approved_twice_applies_once_and_a_discarded_one_never(
    bulk_applied, tmp_path, staff
):
    short = bulk_applied.without(*[pupil.sourced_id for pupil in bulk_applied.pupils[:8]])
    held = roster_sync_start(
        source=roster_write(short, tmp_path / "one"), origin=RosterSync.Origin.UPLOAD,
        started_by=staff,
    )  # fmt: skip
    assert held.state == RosterSync.State.HELD

    roster_sync_approve(sync=held, approved_by=staff, address="127.0.0.1")
    with pytest.raises(RosterSyncClosed):
        roster_sync_approve(sync=held, approved_by=staff, address="127.0.0.1")

    held.refresh_from_db()
    assert held.state == RosterSync.State.APPLIED and held.decided_by == staff
    assert AuditEvent.objects.filter(action=Action.ROSTER_APPROVED).count() == 1
    # A second short roster (eight more missing) is held; discarding it changes nothing.
    shorter = short.without(*[pupil.sourced_id for pupil in short.pupils[:4]])
    other = roster_sync_start(
        source=roster_write(shorter, tmp_path / "two"), origin=RosterSync.Origin.UPLOAD
    )
    assert other.state == RosterSync.State.HELD, other.summary_line()
    roster_sync_discard(sync=other, discarded_by=staff, address=None)
    with pytest.raises(RosterSyncClosed, match="was discarded"):
        roster_sync_approve(sync=other, approved_by=staff, address=None)
    assert Learner.objects.filter(left_at__isnull=False).count() == 8
    assert AuditEvent.objects.filter(action=Action.ROSTER_DISCARDED).count() == 1


@pytest.mark.django_db
def test_bad_input_to_the_command_is_a_clear_sentence(tmp_path):
    with pytest.raises(CommandError, match="There is no school with the code 'NOPE'"):
        call_command("roster_sync", str(tmp_path), "--school", "NOPE")
    with pytest.raises(CommandError, match="There is no file or folder"):
        call_command("roster_sync", str(tmp_path / "missing.zip"))
    (tmp_path / "junk.zip").write_bytes(b"not a zip at all")
    with pytest.raises(CommandError, match=r"roster sync \d+: the roster could not be read: "):
        call_command("roster_sync", str(tmp_path / "junk.zip"))
    assert RosterSync.objects.get().state == RosterSync.State.FAILED
    with pytest.raises(CommandError, match="There is no roster sync 999"):
        call_command("roster_sync", "--approve", "999")
    with pytest.raises(CommandError, match="Name the roster to sync"):
        call_command("roster_sync")


def held_sync(*leavers: Learner) -> RosterSync:
    """A sync held for an admin whose plan has these learners leave."""
    school = School.default()
    part = SchoolPlan(school.pk, school.code, school.name,
                      leavers=[Leaver(learner.pk, learner.username) for learner in leavers],
                      hold_reasons=["Too many pupils would leave."])  # fmt: skip
    plan = SyncPlan(schools=[part])
    return RosterSync.objects.create(
        origin=RosterSync.Origin.UPLOAD, state=RosterSync.State.HELD, plan=plan.to_json(),
        left=len(leavers), hold_reasons=part.hold_reasons,
    )  # fmt: skip


@pytest.mark.backend  # the lock row and the conditional update, in racing threads
@pytest.mark.django_db(transaction=True)
def test_approvals_racing_apply_a_held_sync_once(staff):
    pupils = [make_learner(f"pupil.{number}", f"u-{number}") for number in range(3)]
    sync = held_sync(*pupils)

    def approve():
        try:
            fresh = RosterSync.objects.get(pk=sync.pk)
            return roster_sync_approve(sync=fresh, approved_by=staff, address=None).state
        finally:
            connections.close_all()

    outcomes = run_together(3, approve)

    assert outcomes.count(RosterSync.State.APPLIED) == 1, outcomes
    assert all(isinstance(other, RosterSyncClosed) for other in outcomes if other != "applied")
    assert AuditEvent.objects.filter(action=Action.ROSTER_APPROVED).count() == 1
    assert AuditEvent.objects.filter(action=Action.LEARNER_LEFT).count() == 3
    assert Learner.objects.filter(left_at__isnull=False).count() == 3


def test_a_held_plan_made_out_of_date_by_a_later_sync_is_not_applied(staff):
    pupil = make_learner("pupil.one", "u-one")
    sync = held_sync(pupil)
    RosterSync.objects.create(
        origin=RosterSync.Origin.DROP, state=RosterSync.State.APPLIED, applied_at=timezone.now()
    )

    with pytest.raises(RosterSyncClosed, match="Another sync was applied after this one was"):
        roster_sync_approve(sync=sync, approved_by=staff, address=None)

    sync.refresh_from_db()
    assert sync.state == RosterSync.State.HELD
    pupil.refresh_from_db()
    assert pupil.left_at is None
    roster_sync_discard(sync=sync, discarded_by=staff, address=None)
    assert RosterSync.objects.get(pk=sync.pk).state == RosterSync.State.DISCARDED


def run_together(count, work) -> list:
    """Run `work` in `count` threads started together; return each one's outcome or error."""
    outcomes: list = [None] * count
    start = threading.Barrier(count)

    def run(index):
        start.wait(timeout=30)
        try:
            outcomes[index] = work()
        except Exception as error:  # noqa: BLE001 - the test reports what each thread met
            outcomes[index] = error

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return outcomes


@pytest.mark.django_db
def test_a_sync_the_portal_fails_to_plan_changes_nothing_and_says_so(tmp_path, monkeypatch, caplog):
    files = roster_write(school_spec(pupils=2, classes=1), tmp_path / "bulk")

    def broken(*args, **kwargs):
        raise RuntimeError("a bug naming Ada Pupil")

    monkeypatch.setattr("roster.services.plan_sync", broken)

    sync = roster_sync_start(source=files, origin=RosterSync.Origin.DROP, filename="bulk")

    assert sync.state == RosterSync.State.FAILED and "nothing changed" in sync.error
    assert "Ada Pupil" not in sync.error  # the exception's text stays in the log
    assert "Ada Pupil" in caplog.text
    assert not RosterClass.objects.exists() and not Learner.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("error", "said"),
    [
        (RuntimeError("a bug naming Ada Pupil"), "failed unexpectedly"),
        (OperationalError("database is locked"), "The database failed"),
        (DataError("value too long for Ada Pupil"), "failed unexpectedly"),
    ],
)
def test_the_command_says_a_failure_of_the_portals_in_a_sentence_never_a_traceback(
    tmp_path, monkeypatch, error, said
):
    files = roster_write(school_spec(pupils=2, classes=1), tmp_path / "bulk")

    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr("roster.services.plan_sync", broken)

    with pytest.raises(CommandError, match=said) as refused:
        call_command("roster_sync", str(files), stdout=io.StringIO())

    assert "Ada Pupil" not in str(refused.value)
    assert RosterSync.objects.get().state == RosterSync.State.FAILED
    assert not Learner.objects.exists()


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_september_is_one_previewed_sync_archiving_last_year_and_moving_pupils_up(
    upstream, tmp_path
):
    spec = school_spec(pupils=10, classes=1, grade="Y6", year_of_birth=2015)
    _sync, line = sync_command(str(roster_write(spec, tmp_path / "year-1")))
    assert line == ("applied", 10, 0, 0, 0)
    last_year = RosterClass.objects.get(sourced_id=spec.classes[0].sourced_id).group
    new_term = Term("term-2027", "2027/28", date(2027, 9, 1), date(2028, 7, 20), "2028")
    next_year = replace(
        spec,
        terms=[new_term],
        pupils=[replace(pupil, grade="Y7") for pupil in spec.pupils],
        classes=[Klass("org-1-7a", "7A", "org-1", term="term-2027", grades=("Y7",))],
        enrolments=[("org-1-7a", spec.teachers[0].sourced_id, "teacher")]
        + [("org-1-7a", pupil.sourced_id, "student") for pupil in spec.pupils],
    )

    sync, line = sync_command(str(roster_write(next_year, tmp_path / "year-2")))

    assert line[0] == "held" and line[1:4] == (0, 0, 10), line  # shown first
    assert Learner.objects.filter(level=Level.PRIMARY).count() == 10
    _sync, line = sync_command("--approve", str(sync.pk))
    assert line[0] == "applied"
    last_year.refresh_from_db()
    assert last_year.archived_at is not None
    assert not last_year.memberships.filter(left_at__isnull=True).exists()
    assert last_year.memberships.count() == 10  # history kept
    this_year = RosterClass.objects.get(sourced_id="org-1-7a").group
    assert (this_year.name, this_year.academic_year) == ("7A", "2027/28")
    assert this_year.memberships.filter(left_at__isnull=True).count() == 10
    assert Learner.objects.filter(level=Level.SECONDARY).count() == 10  # the portal's level
    assert creations(upstream) == 10  # nobody registered again
    pupil = Learner.objects.get(username=spec.pupils[0].login)
    now_in = GroupMembership.objects.filter(learner=pupil, left_at__isnull=True)
    assert sorted(now_in.values_list("group__name", "group__academic_year")) == [
        ("7A", "2027/28"), ("Year 7", "2027/28"),
    ]  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_a_sync_of_several_schools_records_each_school_it_touches(upstream, tmp_path):
    first = School.objects.create(code="TRUST01", name="Academy 1")
    second = School.objects.create(code="TRUST02", name="Academy 2")
    spec = trust_spec(schools=2, pupils_per_school=2, classes_per_school=1, enrolments_per_pupil=1)

    sync = roster_sync_start(
        source=roster_write(spec, tmp_path / "trust"), origin=RosterSync.Origin.COMMAND
    )

    assert sync.school is None and sync.joined == 4, sync.summary_line()
    assert set(sync.schools.all()) == {first, second}
