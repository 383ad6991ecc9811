"""Applying a roster sync's plan (plans built by hand): joiners, leavers, staff, September."""

from dataclasses import replace
from datetime import date, timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from accounts.models import SchoolRole, StaffRole
from audit.models import AuditEvent
from classes.models import GroupMembership, GroupStaff, SchoolGroup
from followups.models import FollowUp
from imports.models import ImportJob, ImportRow
from imports.passwords import password_decrypt
from learners.models import Learner, Level
from learners.signals import learner_level_changed
from lessons.models import CardSession, SignInCard
from lessons.services import group_cards_print, window_open
from privacy.holds import records_hold_place
from privacy.retention import records_sweep
from roster.applying import plan_apply
from roster.joining import roster_links_settle, sync_import_jobs
from roster.models import RosterClass, RosterPerson, RosterSync
from roster.plan import (
    Archived,
    Change,
    Joiner,
    Leaver,
    Matched,
    NewClass,
    Returner,
    SchoolPlan,
    StaffMember,
    SyncPlan,
)
from schools.models import School
from tests.factories import (
    PASSWORD,
    flagged,
    make_group,
    make_learner,
    make_staff,
    put_in_group,
    signed_in,
)

Action = AuditEvent.Action
YEAR = "2026/27"


def school_plan(**lists) -> SchoolPlan:
    school = School.default()
    return SchoolPlan(school_id=school.pk, code=school.code, name=school.name, **lists)


def applied(*schools: SchoolPlan, sync: RosterSync | None = None) -> RosterSync:
    """Apply a plan of these schools' parts as a sync does (no admin: the roster acts)."""
    if sync is None:
        plan = SyncPlan(schools=list(schools))
        sync = RosterSync.objects.create(
            origin=RosterSync.Origin.COMMAND, state=RosterSync.State.APPLYING, plan=plan.to_json()
        )
    plan_apply(sync=sync, actor=None, address=None)
    return sync


def joiner(number: int, *, made_password: bool = True, classes=("class-7a",)) -> Joiner:
    return Joiner(
        sourced_id=f"pupil-{number}", username=f"roster.pupil{number}", first_name=f"Pupil{number}",
        last_name="Roster", email="", dob=f"2014-03-{1 + number % 9:02d}", level=Level.SECONDARY,
        grade="07", class_ids=list(classes), made_password=made_password,
        last_modified="2026-09-01T08:00:00+00:00",
    )  # fmt: skip


CLASS_7A = NewClass("class-7a", "7A", SchoolGroup.Kind.TEACHING_CLASS, Level.SECONDARY, YEAR)


def creations(upstream) -> int:
    return upstream.state.count(endpoint="create-learner")


# Joiners: registered upstream through the bulk run, exactly once -------------------------------


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_joiners_are_registered_once_join_their_class_and_sign_in(upstream):
    plan = school_plan(
        new_classes=[CLASS_7A],
        joiners=[joiner(1), joiner(2), joiner(3, made_password=False)],
    )

    sync = applied(plan)
    applied(sync=sync)  # applied again (twice, or after a crash): nothing more is sent

    assert creations(upstream) == 3
    job = sync_import_jobs(sync).get()
    assert job.state == ImportJob.State.FINISHED and job.filename == f"roster sync {sync.pk}"
    assert list(sync.import_jobs.all()) == [job] and job.rows.count() == 3
    group = RosterClass.objects.get(sourced_id="class-7a").group
    assert (group.name, group.academic_year, group.level) == ("7A", YEAR, Level.SECONDARY)
    members = set(group.memberships.filter(left_at__isnull=True).values_list("learner__username"))
    assert members == {("roster.pupil1",), ("roster.pupil2",), ("roster.pupil3",)}
    row = job.rows.get(username="roster.pupil1")
    assert row.state == ImportRow.State.REGISTERED and row.password_generated
    assert Client().login(
        username="roster.pupil1", password=password_decrypt(row.password_encrypted)
    )
    # A pupil who signs in by card or school account: a secret nobody is shown, wiped.
    carded = job.rows.get(username="roster.pupil3")
    assert not carded.password_generated and carded.password_encrypted == ""
    assert roster_links_settle() == 3
    person = RosterPerson.objects.get(sourced_id="pupil-1")
    assert person.learner == Learner.objects.get(username="roster.pupil1")
    assert person.role == RosterPerson.Role.STUDENT and person.grade == "07"
    assert person.last_modified.isoformat() == "2026-09-01T08:00:00+00:00"


@pytest.mark.django_db(transaction=True)
def test_a_hand_uploaded_file_named_like_the_syncs_job_never_blocks_its_joiners(upstream):
    plan = SyncPlan(schools=[school_plan(new_classes=[CLASS_7A], joiners=[joiner(1)])])
    sync = RosterSync.objects.create(
        origin=RosterSync.Origin.COMMAND, state=RosterSync.State.APPLYING, plan=plan.to_json()
    )
    hand = ImportJob.objects.create(
        school=School.default(),
        filename=f"roster sync {sync.pk}",
        state=ImportJob.State.FINISHED,
        created_at=timezone.now(),
    )

    applied(sync=sync)

    assert creations(upstream) == 1
    assert Learner.objects.filter(username="roster.pupil1").exists()
    assert hand not in sync_import_jobs(sync) and sync_import_jobs(sync).count() == 1


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_an_outage_mid_run_then_the_next_plan_registers_each_pupil_exactly_once(upstream):
    upstream.state.faults.add_spec("create-learner=503:after=2,times=2")
    joiners = [joiner(number) for number in range(1, 6)]

    first = applied(school_plan(new_classes=[CLASS_7A], joiners=joiners))

    job = sync_import_jobs(first).get()
    assert sorted(job.rows.values_list("state", flat=True)) == ["failed"] * 2 + ["registered"] * 3
    assert creations(upstream) == 5
    failed = set(job.rows.filter(state="failed").values_list("username", flat=True))
    # The next sync names every pupil again as joining (as a sync before the links settle
    # would): only the two whose rows failed are sent, once each, however often applied.
    second = applied(school_plan(new_classes=[CLASS_7A], joiners=joiners))
    applied(sync=second)

    assert creations(upstream) == 7
    retry = sync_import_jobs(second).get()
    assert set(retry.rows.values_list("username", flat=True)) == failed
    assert retry.state == ImportJob.State.FINISHED
    usernames = [f"roster.pupil{number}" for number in range(1, 6)]
    registered = Learner.objects.filter(username__in=usernames, status=Learner.Status.ACTIVE)
    assert registered.count() == 5
    assert roster_links_settle() == 5
    assert RosterPerson.objects.filter(learner__isnull=False).count() == 5


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_a_trusts_joiners_register_into_their_own_schools_a_job_each(upstream):
    ash = School.objects.create(code="100002", name="Ash Academy")
    ash_part = SchoolPlan(school_id=ash.pk, code=ash.code, name=ash.name,
                          new_classes=[replace(CLASS_7A, sourced_id="ash-7a")],
                          joiners=[joiner(9, classes=["ash-7a"])])  # fmt: skip

    sync = applied(school_plan(new_classes=[CLASS_7A], joiners=[joiner(1)]), ash_part)

    jobs = list(sync_import_jobs(sync))
    assert [job.school for job in jobs] == [School.default(), ash]
    assert set(sync.import_jobs.all()) == set(jobs) and creations(upstream) == 2
    pupil = Learner.objects.get(username="roster.pupil9")
    assert pupil.school == ash
    group = RosterClass.objects.get(sourced_id="ash-7a").group
    assert group.school == ash and group.memberships.get().learner == pupil
    assert RosterClass.objects.get(sourced_id="class-7a").group.school == School.default()


# Leavers and returners ---------------------------------------------------------------------------


@pytest.fixture
def leaver_setup(db):
    group = make_group("8B")
    amy = make_learner("amy.pupil", "u-amy")
    put_in_group(group, amy)
    teacher = make_staff("tess.teacher", role=StaffRole.TEACHER, groups=[group])
    card = group_cards_print(group=group, learners=[amy], printed_by=teacher, address=None)[0]
    window_open(group=group, minutes=30, opened_by=teacher, address=None)
    follow_up = flagged(amy, "SLEEP")
    return group, amy, card, follow_up


def test_a_leaver_cannot_sign_in_nor_start_and_keeps_their_records(leaver_setup):
    group, amy, card, follow_up = leaver_setup
    device = Client()
    assert device.post("/card/", {"secret": card.secret}).status_code == 200
    assert device.post("/card/", {"confirm": "1"}).status_code == 302
    assert device.get("/me/").status_code == 200  # signed in by card
    own = signed_in(amy.user)
    assert own.get("/me/").status_code == 200

    applied(school_plan(leavers=[Leaver(amy.pk, "Amy Pupil", "pupil-amy")]))

    amy.refresh_from_db()
    assert amy.left_at is not None and amy.status == Learner.Status.ACTIVE
    assert not Client().login(username="amy.pupil", password=PASSWORD)
    for client in (own, device):
        response = client.post("/me/start/")
        assert response.status_code == 302 and "/me/" not in response.url.split("?")[0]
    assert SignInCard.objects.get(learner=amy).voided_at is not None
    session = CardSession.objects.get(learner=amy)
    assert session.end_reason == CardSession.EndReason.CARD_VOIDED
    assert device.post("/card/", {"secret": card.secret}).status_code == 403
    membership = GroupMembership.objects.get(group=group, learner=amy)  # history kept
    assert membership.left_at is not None
    follow_up.refresh_from_db()
    assert follow_up.status == FollowUp.Status.NEW  # stays with staff
    event = AuditEvent.objects.get(action=Action.LEARNER_LEFT, learner=amy)
    assert event.actor is None
    assert event.detail == {"source": "roster", "groups_left": 1, "cards_voided": 1}


def test_a_returner_is_the_same_learner_again(leaver_setup):
    group, amy, _card, _follow_up = leaver_setup
    RosterClass.objects.create(school=group.school, sourced_id="class-8b", group=group)
    applied(school_plan(leavers=[Leaver(amy.pk, "Amy Pupil", "pupil-amy")]))

    applied(school_plan(returners=[Returner("pupil-amy", amy.pk, "Amy Pupil", ["class-8b"])]))

    amy.refresh_from_db()
    assert amy.left_at is None and Learner.objects.filter(username="amy.pupil").count() == 1
    assert Client().login(username="amy.pupil", password=PASSWORD)
    assert FollowUp.objects.filter(learner=amy).count() == 1  # the same records
    memberships = GroupMembership.objects.filter(group=group, learner=amy)
    assert memberships.count() == 2 and memberships.filter(left_at__isnull=True).count() == 1
    assert RosterPerson.objects.get(sourced_id="pupil-amy").learner == amy
    assert AuditEvent.objects.filter(action=Action.LEARNER_RETURNED, learner=amy).count() == 1


def test_retention_counts_from_leaving_and_a_hold_outlives_it(db):
    gone_long, held = make_learner("gone.long", "u-gone"), make_learner("held.pupil", "u-held")
    recent = make_learner("left.recently", "u-recent")
    six_years = timezone.now() - timedelta(days=6 * 366)
    Learner.objects.filter(pk__in=[gone_long.pk, held.pk, recent.pk]).update(
        registered_at=six_years
    )
    applied(school_plan(leavers=[Leaver(x.pk, x.username) for x in (gone_long, held, recent)]))
    four_years = timezone.now() - timedelta(days=4 * 366)
    Learner.objects.filter(pk__in=[gone_long.pk, held.pk]).update(left_at=four_years)
    records_hold_place(learner=held, placed_by=make_staff("dee.dsl"), reason="A concern")

    counts = records_sweep()

    assert counts["expired"] == 1 and counts["held"] == 1
    statuses = dict(Learner.objects.values_list("username", "status"))
    assert statuses["held.pupil"] == Learner.Status.ACTIVE  # kept while held
    assert statuses["left.recently"] == Learner.Status.ACTIVE  # left within the period
    assert Learner.objects.get(pk=gone_long.pk).status == Learner.Status.ERASED


# Changes -----------------------------------------------------------------------------------------


def test_a_level_and_details_change_in_the_portal_only(db):
    pupil = make_learner("ola.pupil", "u-ola")
    pupil.level = Level.PRIMARY
    pupil.save()
    old_group, new_group = make_group("6 Oak", level=Level.PRIMARY), make_group("7A")
    put_in_group(old_group, pupil)
    RosterClass.objects.create(school=new_group.school, sourced_id="class-7a", group=new_group)
    heard = []
    learner_level_changed.connect(lambda sender, learner, **kw: heard.append(learner.level),
                                  weak=False, dispatch_uid="test-roster-level")  # fmt: skip
    change = Change(
        pupil.pk, "pupil-ola", "Ola Pupil", details={"last_name": "Smith", "dob": "2013-02-03"},
        level_from=Level.PRIMARY, level_to=Level.SECONDARY, classes_joined=["class-7a"],
        groups_left=[old_group.pk], grade="07",
    )  # fmt: skip
    try:
        applied(school_plan(changes=[change]))
        applied(school_plan(changes=[change]))
    finally:
        learner_level_changed.disconnect(dispatch_uid="test-roster-level")

    pupil.refresh_from_db()
    assert (pupil.level, pupil.last_name, pupil.dob) == (
        Level.SECONDARY, "Smith", date(2013, 2, 3),
    )  # fmt: skip
    assert heard == [Level.SECONDARY]
    event = AuditEvent.objects.get(action=Action.LEARNER_CHANGED, learner=pupil)
    assert event.actor is None
    assert event.detail == {"fields": ["last_name", "dob", "level"], "source": "roster"}
    current = GroupMembership.objects.filter(learner=pupil, left_at__isnull=True)
    assert list(current.values_list("group__name", flat=True)) == ["7A"]
    assert GroupMembership.objects.get(learner=pupil, group=old_group).left_at is not None
    assert RosterPerson.objects.get(sourced_id="pupil-ola").grade == "07"


def test_a_learner_registered_by_hand_is_linked_and_joins_their_class(db):
    pupil = make_learner("hand.made", "u-hand")
    matched = Matched(pupil.pk, "pupil-hand", "Hand Made", "07", ["class-7a"])

    applied(school_plan(new_classes=[CLASS_7A], matched=[matched]))

    person = RosterPerson.objects.get(sourced_id="pupil-hand")
    assert (person.learner, person.grade, person.role) == (pupil, "07", RosterPerson.Role.STUDENT)
    current = GroupMembership.objects.get(learner=pupil, left_at__isnull=True)
    assert current.group == RosterClass.objects.get(sourced_id="class-7a").group
    assert Learner.objects.count() == 1


# Staff: matched by email, never given powers -----------------------------------------------------


def test_staff_are_matched_by_email_never_duplicated_and_never_given_powers(db):
    head = make_staff("hana.head", role=StaffRole.ADMIN)
    head.email = "Hana.Head@School.example"
    head.save()
    hand_made = make_group("Chess club")
    GroupStaff.objects.create(group=hand_made, user=head)
    staff = [
        StaffMember("t-hana", head.pk, "", "hana.head@school.example", "Hana", "Head",
                    ["class-7a"]),
        StaffMember("t-new", None, "nia.new", "nia.new@school.example", "Nia", "New",
                    ["class-7a"]),
    ]  # fmt: skip

    applied(school_plan(new_classes=[CLASS_7A], staff=staff))
    applied(school_plan(new_classes=[CLASS_7A], staff=staff))

    group = RosterClass.objects.get(sourced_id="class-7a").group
    assert User.objects.filter(email__iexact="hana.head@school.example").count() == 1
    school = School.default()
    assert SchoolRole.objects.get(user=head, school=school).role == StaffRole.ADMIN
    new = User.objects.get(email="nia.new@school.example")
    assert new.username == "nia.new" and not new.has_usable_password() and new.is_active
    assert SchoolRole.objects.get(user=new, school=school).role == StaffRole.TEACHER
    assert set(GroupStaff.objects.filter(group=group).values_list("user", flat=True)) == {
        head.pk, new.pk,
    }  # fmt: skip
    assert RosterPerson.objects.get(sourced_id="t-hana").user == head
    assert AuditEvent.objects.filter(action=Action.STAFF_ADDED).count() == 1
    # Next year's plan: Hana teaches no roster class; her own club stays hers.
    staff[0].class_ids = []
    applied(school_plan(staff=staff))
    assert not GroupStaff.objects.filter(group=group, user=head).exists()
    assert GroupStaff.objects.filter(group=hand_made, user=head).exists()
    assert SchoolRole.objects.get(user=head, school=school).role == StaffRole.ADMIN


def test_a_new_teacher_gets_the_new_account_previewed_never_a_closed_one(db):
    closed = make_staff("tom", role=StaffRole.TEACHER)
    closed.email = "tom@school.example"
    closed.is_active = False
    closed.save()
    pupil = make_learner("tina.pupil", "u-tina")
    User.objects.filter(pk=pupil.user_id).update(email="tina@school.example")
    staff = [
        StaffMember("t-tom", None, "tom", "tom@school.example", "Tom", "T", ["class-7a"]),
        StaffMember("t-tina", None, "tina", "tina@school.example", "Tina", "T", ["class-7a"]),
    ]

    applied(school_plan(new_classes=[CLASS_7A], staff=staff))

    tom = RosterPerson.objects.get(sourced_id="t-tom").user
    assert (tom.username, tom.email, tom.is_active) == ("tom2", "tom@school.example", True)
    assert SchoolRole.objects.get(user=tom, school=School.default()).role == StaffRole.TEACHER
    tina = RosterPerson.objects.get(sourced_id="t-tina").user
    assert tina.username == "tina" and tina != pupil.user
    group = RosterClass.objects.get(sourced_id="class-7a").group
    assert set(GroupStaff.objects.filter(group=group).values_list("user", flat=True)) == {
        tom.pk, tina.pk,
    }  # fmt: skip
    closed.refresh_from_db()
    assert not closed.is_active and not GroupStaff.objects.filter(user=closed).exists()


def test_a_matched_account_closed_since_the_preview_is_not_linked(db):
    tom = make_staff("tom", role=StaffRole.TEACHER)
    User.objects.filter(pk=tom.pk).update(is_active=False)
    staff = [StaffMember("t-tom", tom.pk, "", "tom@school.example", "Tom", "T", ["class-7a"])]

    applied(school_plan(new_classes=[CLASS_7A], staff=staff))

    assert RosterClass.objects.filter(sourced_id="class-7a").exists()
    assert not RosterPerson.objects.filter(sourced_id="t-tom").exists()
    assert not GroupStaff.objects.filter(user=tom).exists()
    assert User.objects.filter(email="tom@school.example").count() == 0


def test_a_role_added_never_changes_a_role_held_here_since_the_preview(db):
    admin = make_staff("ada.admin", role=StaffRole.ADMIN)
    staff = [StaffMember("t-ada", admin.pk, "", "", "Ada", "A", ["class-7a"], role_added=True)]

    applied(school_plan(new_classes=[CLASS_7A], staff=staff))

    group = RosterClass.objects.get(sourced_id="class-7a").group
    assert GroupStaff.objects.filter(group=group, user=admin).exists()
    assert SchoolRole.objects.get(user=admin, school=School.default()).role == StaffRole.ADMIN
    events = AuditEvent.objects.filter(action=Action.STAFF_CHANGED)
    assert [event.detail.get("role") for event in events] == [None]


# September ---------------------------------------------------------------------------------------


def test_september_archives_last_years_classes_and_builds_this_years(db):
    last_year = SchoolGroup.objects.create(
        name="7A", level=Level.SECONDARY, academic_year="2025/26"
    )
    pupil = make_learner("sam.pupil", "u-sam")
    put_in_group(last_year, pupil)
    RosterClass.objects.create(school=last_year.school, sourced_id="class-7a", group=last_year)
    plan = school_plan(
        archived=[Archived(last_year.pk, "7A", "2025/26")],
        new_classes=[
            NewClass("class-7a", "7A", SchoolGroup.Kind.TEACHING_CLASS, Level.SECONDARY, YEAR),
            NewClass("class-8a", "8A", SchoolGroup.Kind.TEACHING_CLASS, Level.SECONDARY, YEAR),
        ],
        changes=[Change(pupil.pk, "pupil-sam", "Sam Pupil", classes_joined=["class-8a"])],
        new_academic_year=YEAR,
    )

    applied(plan)
    applied(plan)

    last_year.refresh_from_db()
    assert last_year.archived_at is not None
    history = GroupMembership.objects.get(group=last_year, learner=pupil)
    assert history.left_at is not None  # kept, ended
    this_years = SchoolGroup.objects.filter(academic_year=YEAR).order_by("name")
    assert list(this_years.values_list("name", "archived_at")) == [("7A", None), ("8A", None)]
    assert RosterClass.objects.get(sourced_id="class-7a").group == this_years[0]
    current = GroupMembership.objects.filter(learner=pupil, left_at__isnull=True)
    assert list(current.values_list("group__name", "group__academic_year")) == [("8A", YEAR)]
    assert AuditEvent.objects.filter(action=Action.GROUP_ARCHIVED).count() == 1
    assert AuditEvent.objects.filter(action=Action.GROUP_CREATED).count() == 2


def test_a_class_staff_made_by_hand_since_the_preview_is_never_taken_over(db):
    by_hand = make_group("7A")
    by_hand.academic_year = YEAR
    by_hand.save()
    pupil = make_learner("sam.pupil", "u-sam")
    put_in_group(by_hand, pupil)
    changes = [Change(pupil.pk, "pupil-sam", "Sam Pupil", classes_joined=["class-7a"])]

    applied(school_plan(new_classes=[CLASS_7A], changes=changes))

    made = RosterClass.objects.get(sourced_id="class-7a").group
    assert made.name == "7A (class-7a)" and made != by_hand
    assert not RosterClass.objects.filter(group=by_hand).exists()
    assert list(by_hand.memberships.values_list("learner", flat=True)) == [pupil.pk]
    assert list(made.memberships.values_list("learner", flat=True)) == [pupil.pk]


def test_applying_a_plan_twice_changes_nothing_more(leaver_setup):
    group, amy, _card, _follow_up = leaver_setup
    ben = make_learner("ben.pupil", "u-ben")
    plan = school_plan(
        new_classes=[CLASS_7A],
        leavers=[Leaver(amy.pk, "Amy Pupil")],
        changes=[Change(ben.pk, "pupil-ben", "Ben Pupil", details={"first_name": "Benjamin"},
                        classes_joined=["class-7a"])],
        staff=[StaffMember("t-1", None, "tom.t", "tom@school.example", "Tom", "T", ["class-7a"])],
    )  # fmt: skip
    sync = applied(plan)
    before = (
        AuditEvent.objects.count(), GroupMembership.objects.count(), User.objects.count(),
        SchoolGroup.objects.count(), GroupStaff.objects.count(), RosterPerson.objects.count(),
    )  # fmt: skip

    applied(sync=sync)

    after = (
        AuditEvent.objects.count(), GroupMembership.objects.count(), User.objects.count(),
        SchoolGroup.objects.count(), GroupStaff.objects.count(), RosterPerson.objects.count(),
    )  # fmt: skip
    assert before[0] > 5 and after == before
