"""The roster sync's plan: who joins, leaves and changes, per school, before anything changes."""

from dataclasses import replace
from datetime import date

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import SchoolRole, StaffRole
from audit.models import AuditEvent
from classes.models import GroupStaff, SchoolGroup
from imports.models import ImportJob, ImportRow
from learners.models import Learner, Level
from roster.applying import plan_apply as roster_apply
from roster.models import RosterClass, RosterPerson, RosterSync
from roster.plan import YEAR_GROUP_PREFIX, SyncPlan
from roster.planning import plan_sync
from roster.records import AcademicSession, Problem
from roster.selectors import school_lists
from schools.models import PartnerSettings, School
from tests.factories import make_group, make_learner, make_staff, put_in_group
from tests.roster_files import Klass, RosterSpec, Teacher, Term, add_school, school_spec
from tests.roster_files import School as RosterSchool
from tests.roster_sets import file_set, plan_apply

pytestmark = pytest.mark.django_db

TODAY = date(2026, 10, 1)
YEAR = "2026/27"


@pytest.fixture
def school() -> School:
    return School.objects.get_or_create(code="SCHOOL", defaults={"name": "Our school"})[0]


def planned(spec: RosterSpec, **kwargs) -> SyncPlan:
    return plan_sync(file_set(spec), today=TODAY, **kwargs)


def synced(spec: RosterSpec) -> SyncPlan:
    """Plan the spec's files and apply the plan; return the plan."""
    files = file_set(spec)
    plan = plan_sync(files, today=TODAY)
    plan_apply(plan, files)
    return plan


def reasons(plan: SyncPlan) -> list[str]:
    return [problem.reason for problem in plan.problems]


def year_group(school: School, grade: str = "07") -> str:
    return f"{YEAR_GROUP_PREFIX}{school.pk}:{grade}:{YEAR}"


# Schools -----------------------------------------------------------------------------------


def test_orgs_are_matched_by_identifier_and_an_unknown_one_is_a_problem(school):
    elm = School.objects.create(code="ELM-1", name="Elm Academy")
    spec = school_spec(pupils=2, classes=1)
    spec.schools[0] = replace(spec.schools[0], code="school")  # capitals do not matter
    other = school_spec(code="", org="elm-1", pupils=1, classes=1)  # no identifier: sourcedId
    ghost = school_spec(code="GHOST", org="org-9", pupils=3, classes=1)
    for extra in (other, ghost):
        spec.schools += extra.schools
        spec.pupils += extra.pupils
        spec.teachers += extra.teachers
        spec.classes += extra.classes
        spec.enrolments += extra.enrolments

    plan = planned(spec)

    assert [(s.code, s.joined) for s in plan.schools] == [("ELM-1", 1), ("SCHOOL", 2)]
    assert plan.schools[0].school_id == elm.pk
    assert plan.problems == [
        Problem(
            "orgs.csv",
            4,
            "No school has the code GHOST in the portal; add it with `manage.py add_school`.",
            "org-9",
        )
    ]


def test_a_sync_for_one_school_ignores_the_other_orgs(school):
    elm = School.objects.create(code="ELM", name="Elm Academy")
    spec = school_spec(pupils=2, classes=1)
    other = school_spec(code="GHOST", org="org-9", pupils=3, classes=1)
    spec.schools += other.schools
    spec.pupils += other.pupils

    plan = planned(spec, school=school)
    assert [(s.code, s.joined) for s in plan.schools] == [("SCHOOL", 2)]
    assert plan.problems == []

    assert planned(spec, school=elm).schools == []


# A first sync ------------------------------------------------------------------------------


def test_a_first_sync_plans_joiners_classes_year_groups_and_teachers(school):
    spec = school_spec(pupils=4, classes=2)
    spec.classes[1] = replace(spec.classes[1], class_type="homeroom")

    plan = planned(spec)

    assert plan.problems == [] and plan.hold_reasons == [] and not plan.held
    (mine,) = plan.schools
    assert (mine.joined, mine.left, mine.changed, mine.learners_before) == (4, 0, 0, 0)
    first = mine.joiners[0]
    assert (first.sourced_id, first.username, first.first_name, first.last_name) == (
        "org-1-pupil-1", "org-1.pupil1", "Pupil1", "Org-1",
    )  # fmt: skip
    assert (first.dob, first.level, first.grade, first.made_password) == (
        "2014-02-02", Level.SECONDARY, "07", True,
    )  # fmt: skip
    assert first.class_ids == sorted(["org-1-class-1", year_group(school)])
    assert [(c.sourced_id, c.name, c.kind, c.level, c.academic_year) for c in mine.new_classes] == [
        ("org-1-class-1", "07A", SchoolGroup.Kind.TEACHING_CLASS, Level.SECONDARY, YEAR),
        ("org-1-class-2", "07B", SchoolGroup.Kind.TUTOR_GROUP, Level.SECONDARY, YEAR),
        (year_group(school), "Year 7", SchoolGroup.Kind.YEAR_GROUP, Level.SECONDARY, YEAR),
    ]
    assert [(s.sourced_id, s.user_id, s.username, s.class_ids) for s in mine.staff] == [
        ("org-1-teacher-1", None, "teacher1.org-1", ["org-1-class-1"]),
        ("org-1-teacher-2", None, "teacher2.org-1", ["org-1-class-2"]),
    ]
    assert SyncPlan.from_json(plan.to_json()) == plan


def test_planning_changes_nothing(school):
    spec = school_spec(pupils=3, classes=1)
    tables = (Learner, SchoolGroup, User, RosterPerson, PartnerSettings)
    before = [model.objects.count() for model in tables]

    assert planned(spec).joined == 3

    assert [model.objects.count() for model in tables] == before


def test_the_same_files_planned_again_once_applied_give_an_empty_plan(school):
    spec = school_spec(pupils=6, classes=2)
    first = synced(spec)
    assert first.joined == 6 and len(first.schools[0].new_classes) == 3

    again = planned(spec)

    (mine,) = again.schools
    assert (mine.learners_before, mine.enrolments_before) == (6, 12)
    assert mine.joiners == mine.changes == mine.leavers == mine.matched == []
    assert mine.new_classes == mine.class_changes == mine.staff == mine.archived == []
    assert again.problems == [] and not again.held


# Pupils' checks ----------------------------------------------------------------------------


def test_a_pupil_the_form_would_refuse_is_a_problem_with_its_line(school):
    spec = school_spec(pupils=7, classes=1)
    p = spec.pupils
    p[0] = replace(p[0], grade="Class Z")
    p[1] = replace(p[1], birth_date=None)
    p[2] = replace(p[2], username="bad name!")
    p[3] = replace(p[3], email="not-an-address")
    p[4] = replace(p[4], given_name="Ali\u202ece")
    p[5] = replace(p[5], username="ORG-1.PUPIL7")  # the same as pupil 7's, in capitals

    plan = planned(spec)

    assert [(x.file, x.line, x.sourced_id) for x in plan.problems] == [
        ("users.csv", 2, "org-1-pupil-1"),
        ("users.csv", 3, "org-1-pupil-2"),
        ("users.csv", 4, "org-1-pupil-3"),
        ("users.csv", 5, "org-1-pupil-4"),
        ("users.csv", 6, "org-1-pupil-5"),
        ("users.csv", 8, "org-1-pupil-7"),
    ]
    said = reasons(plan)
    assert "no level for the grade Class Z: set it on /roster/grades/" in said[0]
    assert said[1].startswith("birthDate: the pupil has no date of birth")
    assert said[2].startswith("username: Enter a valid username")
    assert said[3] == "email: Enter a valid email address."
    assert said[4].startswith("givenName: ")
    assert "also the username of the pupil on line 7" in said[5]
    assert [j.sourced_id for j in plan.schools[0].joiners] == ["org-1-pupil-6"]


def test_the_schools_table_and_further_education_set_levels(school):
    spec = school_spec(pupils=2, classes=1, grade="Form 3")
    PartnerSettings.objects.update_or_create(
        school=school, defaults={"roster_grade_levels": "Form 3 = primary"}
    )
    plan = planned(spec)
    assert {j.level for j in plan.schools[0].joiners} == {Level.PRIMARY}
    assert plan.schools[0].new_classes[-1].name == "Grade Form 3"

    PartnerSettings.objects.filter(school=school).update(
        roster_grade_levels="", roster_further_education=True
    )
    plan = planned(spec)
    assert {j.level for j in plan.schools[0].joiners} == {Level.FURTHER_EDUCATION}


def test_made_passwords_follow_the_schools_settings(school):
    spec = school_spec(pupils=2, classes=1, grade="R", year_of_birth=2021)
    PartnerSettings.objects.update_or_create(school=school, defaults={"primary_cards_only": True})
    plan = planned(spec)
    assert [(j.level, j.made_password) for j in plan.schools[0].joiners] == [
        (Level.PRIMARY, False), (Level.PRIMARY, False),
    ]  # fmt: skip
    assert plan.schools[0].new_classes[-1].name == "Reception"

    PartnerSettings.objects.filter(school=school).update(
        primary_cards_only=False, roster_made_passwords=False
    )
    assert not any(j.made_password for j in planned(spec).schools[0].joiners)


# Linked pupils -----------------------------------------------------------------------------


def test_a_linked_pupils_details_level_and_classes_changes_never_the_username(school):
    spec = school_spec(pupils=4, classes=2)
    synced(spec)
    hand_made = make_group("Chess club", school=school)
    first = Learner.objects.get(username="org-1.pupil1")
    put_in_group(hand_made, first)
    p = spec.pupils
    p[0] = replace(p[0], family_name="Khan", username="renamed", email="ali@school.example")
    p[1] = replace(p[1], grade="05", birth_date=date(2015, 3, 3))
    spec.enrolments = [e for e in spec.enrolments if e[1] != p[2].sourced_id]
    spec.enrolments.append(("org-1-class-2", p[2].sourced_id, "student"))

    plan = planned(spec)

    (mine,) = plan.schools
    changes = {change.sourced_id: change for change in mine.changes}
    assert sorted(changes) == ["org-1-pupil-1", "org-1-pupil-2", "org-1-pupil-3"]
    one = changes["org-1-pupil-1"]
    assert one.details == {"last_name": "Khan", "email": "ali@school.example"}
    assert (one.name, one.level_to, one.classes_joined, one.groups_left) == (
        "Pupil1 Org-1", "", [], [],
    )  # fmt: skip
    two = changes["org-1-pupil-2"]
    assert two.details == {"dob": "2015-03-03"}
    assert (two.level_from, two.level_to) == (Level.SECONDARY, Level.PRIMARY)
    year_7 = SchoolGroup.objects.get(name="Year 7").pk
    assert (two.classes_joined, two.groups_left) == ([year_group(school, "05")], [year_7])
    three = changes["org-1-pupil-3"]
    class_1 = SchoolGroup.objects.get(name="07A").pk
    assert (three.details, three.classes_joined, three.groups_left) == (
        {}, ["org-1-class-2"], [class_1],
    )  # fmt: skip
    # The hand-made group is never the roster's: pupil 1 stays in it.
    assert hand_made.pk not in one.groups_left
    assert (mine.enrolments_before, mine.enrolments_changed) == (8, 4)
    assert [c.name for c in mine.new_classes] == ["Year 5"]


def test_a_leaver_the_roster_brings_back_is_the_same_learner(school):
    spec = school_spec(pupils=3, classes=1)
    synced(spec)
    back = Learner.objects.get(username="org-1.pupil2")
    Learner.objects.filter(pk=back.pk).update(left_at=timezone.now())

    plan = planned(spec)

    (mine,) = plan.schools
    assert [(r.sourced_id, r.learner_id, r.name) for r in mine.returners] == [
        ("org-1-pupil-2", back.pk, "Pupil2 Org-1")
    ]
    assert mine.returners[0].class_ids == sorted(["org-1-class-1", year_group(school)])
    assert (mine.joined, mine.changes, mine.joiners) == (1, [], [])


def test_a_registration_under_way_is_planned_once(school):
    """Queued or sending: nothing; registered: that learner; failed or invalid: a joiner."""
    spec = school_spec(pupils=5, classes=1)
    job = ImportJob.objects.create(school=school, filename="roster", created_at=timezone.now())
    registered = make_learner("org-1.pupil3", "up-3", school=school)
    Learner.objects.filter(pk=registered.pk).update(first_name="Pupil3", last_name="Org-1",
                                                     dob=date(2014, 4, 4))  # fmt: skip
    for number, state in enumerate(
        ["queued", "sending", "registered", "failed", "invalid"], start=1
    ):
        row = ImportRow.objects.create(
            job=job, row_number=number + 1, state=state,
            learner=registered if state == "registered" else None,
        )  # fmt: skip
        RosterPerson.objects.create(
            school=school, sourced_id=f"org-1-pupil-{number}", role="student", import_row=row
        )

    plan = planned(spec)

    (mine,) = plan.schools
    assert [j.sourced_id for j in mine.joiners] == ["org-1-pupil-4", "org-1-pupil-5"]
    assert [(m.sourced_id, m.learner_id) for m in mine.matched] == [
        ("org-1-pupil-3", registered.pk)
    ]
    assert mine.matched[0].class_ids == sorted(["org-1-class-1", year_group(school)])
    assert mine.changes == [] and plan.problems == []
    assert SyncPlan.from_json(plan.to_json()) == plan


# Learners the portal had before ------------------------------------------------------------


def test_a_learner_registered_by_hand_is_matched_by_username_and_birth_date(school):
    spec = school_spec(pupils=4, classes=1)
    same = make_learner("org-1.pupil1", "up-1", school=school)
    Learner.objects.filter(pk=same.pk).update(first_name="Pupil1", last_name="Org-1",
                                              dob=date(2014, 2, 2))  # fmt: skip
    renamed = make_learner("ORG-1.Pupil2".lower(), "up-2", school=school)
    Learner.objects.filter(pk=renamed.pk).update(dob=date(2014, 3, 3))
    make_learner("org-1.pupil3", "up-3", school=school)  # another date of birth
    make_staff("org-1.pupil4", school=school)

    plan = planned(spec)

    (mine,) = plan.schools
    assert [(m.sourced_id, m.learner_id) for m in mine.matched] == [
        ("org-1-pupil-1", same.pk), ("org-1-pupil-2", renamed.pk),
    ]  # fmt: skip
    assert mine.matched[0].class_ids == sorted(["org-1-class-1", year_group(school)])
    assert mine.matched[0].last_modified == "2026-09-01T08:00:00+00:00"  # kept when linked
    assert [(c.sourced_id, c.details) for c in mine.changes] == [
        ("org-1-pupil-2", {"first_name": "Pupil2", "last_name": "Org-1"})
    ]
    assert mine.changed == 1 and mine.joiners == []
    assert [(p.line, p.reason) for p in plan.problems] == [
        (4, "username org-1.pupil3 is taken by another account."),
        (5, "username org-1.pupil4 is taken by another account."),
    ]
    assert not plan.held  # linked by hand: not the roster's pupils before


def test_a_hand_registered_learner_of_another_school_is_not_matched(school):
    elm = School.objects.create(code="ELM", name="Elm Academy")
    spec = school_spec(pupils=1, classes=1)
    learner = make_learner("org-1.pupil1", "up-1", school=elm)
    Learner.objects.filter(pk=learner.pk).update(dob=date(2014, 2, 2))

    plan = planned(spec)

    assert reasons(plan) == ["username org-1.pupil1 is taken by another account."]
    assert plan.schools[0].matched == []


def really_applied(plan: SyncPlan) -> None:
    """Apply the plan as a sync does (roster.applying); joiners' rows stay queued."""
    sync = RosterSync.objects.create(
        origin=RosterSync.Origin.COMMAND, state=RosterSync.State.APPLYING, plan=plan.to_json()
    )
    roster_apply(sync=sync, actor=None, address=None)


def own_roster(code: str, org: str) -> RosterSpec:
    """Return a school's own roster whose ids (x-class-1, x-teacher-1...) another may use."""
    spec = school_spec(code=code, org=org, prefix="x", pupils=2, classes=1)
    spec.pupils = [replace(p, username=f"{code.lower()}.{p.username}") for p in spec.pupils]
    spec.teachers = [replace(t, email=f"{code.lower()}.{t.email}") for t in spec.teachers]
    return spec


def test_two_schools_using_the_same_roster_ids_never_cross(school):
    aaa = School.objects.create(code="AAA", name="Aspen")
    bbb = School.objects.create(code="BBB", name="Birch")
    really_applied(planned(own_roster("AAA", "org-a")))
    aaa_class = RosterClass.objects.get(school=aaa, sourced_id="x-class-1").group
    aaa_teacher = RosterPerson.objects.get(school=aaa, sourced_id="x-teacher-1").user

    plan = planned(own_roster("BBB", "org-b"))

    assert reasons(plan) == []
    (mine,) = plan.schools
    assert [new.sourced_id for new in mine.new_classes][0] == "x-class-1"
    assert [j.username for j in mine.joiners] == ["bbb.x.pupil1", "bbb.x.pupil2"]
    assert [(m.sourced_id, m.user_id) for m in mine.staff] == [("x-teacher-1", None)]
    # September at Aspen: its class is archived; Birch's new one must not take its link.
    SchoolGroup.objects.filter(pk=aaa_class.pk).update(archived_at=timezone.now())
    really_applied(plan)

    bbb_class = RosterClass.objects.get(school=bbb, sourced_id="x-class-1").group
    assert (bbb_class.school, bbb_class.name) == (bbb, "07A")
    assert RosterClass.objects.get(school=aaa, sourced_id="x-class-1").group == aaa_class
    bbb_teacher = RosterPerson.objects.get(school=bbb, sourced_id="x-teacher-1").user
    assert bbb_teacher.email == "bbb.teacher1.x@school.example"
    assert list(GroupStaff.objects.filter(group=bbb_class).values_list("user", flat=True)) == [
        bbb_teacher.pk
    ]
    assert not GroupStaff.objects.filter(group=bbb_class, user=aaa_teacher).exists()
    assert RosterPerson.objects.get(school=aaa, sourced_id="x-teacher-1").user == aaa_teacher


def test_a_pupil_moving_between_the_files_schools_holds_the_sync_and_names_them(school):
    ash = School.objects.create(code="ASH", name="Ash Academy")
    spec = school_spec(code="SCHOOL", org="org-1", pupils=2, classes=1)
    spec.schools.append(RosterSchool("org-2", "Ash", "ASH"))
    add_school(spec, org="org-2", pupils=1, classes=1, grade="07", year_of_birth=2014,
               prefix="org-2")  # fmt: skip
    synced(spec)
    mover = Learner.objects.get(username="org-1.pupil1")
    spec.pupils[0] = replace(spec.pupils[0], school="org-2")

    for only in (None, ash):
        plan = planned(spec, school=only)

        assert plan.held
        by_code = {part.code: part for part in plan.schools}
        assert by_code["ASH"].hold_reasons == [
            f"{mover.first_name} {mover.last_name} moves from Our school to Ash Academy: the "
            "portal cannot move a learner between schools yet; move them by hand, or discard "
            "this sync."
        ]
        assert reasons(plan) == [
            "This pupil is a learner of Our school in the portal, which cannot move a learner "
            "between schools yet."
        ]
        assert plan.problems[0].sourced_id == "org-1-pupil-1"
        assert by_code["ASH"].joiners == [] and by_code["ASH"].matched == []
        assert all(part.leavers == [] for part in plan.schools)
    # Moved by hand: matched by username in their new school, no longer held.
    Learner.objects.filter(pk=mover.pk).update(school=ash)
    plan = planned(spec)
    assert not plan.held and reasons(plan) == []
    assert [m.learner_id for m in plan.schools[0].matched] == [mover.pk]
    # Another school's own files (not the trust's) use ids of their own: no move.
    own = school_spec(code="ASH", org="org-2", pupils=0, classes=1)
    own.pupils = [spec.pupils[2], replace(spec.pupils[0], username="ash.newcomer")]
    own.enrolments += [("org-2-class-1", p.sourced_id, "student") for p in own.pupils]
    plan = planned(own)
    assert not plan.held and reasons(plan) == []
    assert [j.username for j in plan.schools[0].joiners] == ["ash.newcomer"]


# Leavers -----------------------------------------------------------------------------------


def test_pupils_missing_from_a_bulk_users_file_leave_but_never_a_hand_registered_one(school):
    spec = school_spec(pupils=10, classes=2)
    synced(spec)
    make_learner("by.hand", "up-hand", school=school)
    smaller = spec.without("org-1-pupil-1")
    smaller.pupils[0] = replace(smaller.pupils[0], status="tobedeleted")  # pupil 2

    plan = planned(smaller)

    (mine,) = plan.schools
    assert [(x.sourced_id, x.name) for x in mine.leavers] == [
        ("org-1-pupil-2", "Pupil2 Org-1"), ("org-1-pupil-1", "Pupil1 Org-1"),
    ]  # fmt: skip
    # The tobedeleted row's date is kept; a pupil the file lacks has no row, so no date.
    assert [x.last_modified for x in mine.leavers] == ["2026-09-01T08:00:00+00:00", ""]
    assert (mine.left, mine.learners_before, mine.enrolments_changed) == (2, 10, 4)
    assert mine.hold_reasons == [
        "2 of the school's 10 pupils would leave (20%), more than the 10% a sync applies "
        "without an admin."
    ]
    assert plan.held


def test_a_users_row_the_reader_could_not_use_never_makes_a_leaver(school):
    spec = school_spec(pupils=20, classes=1)
    synced(spec)
    smaller = spec.without("org-1-pupil-1", "org-1-pupil-2")
    smaller.pupils[0] = replace(smaller.pupils[0], status="tobedeleted")  # pupil 3
    files = file_set(smaller)
    # Pupil 1's row was there but unreadable: its id keeps them; pupil 2 simply left.
    files.problems.append(Problem("users.csv", 5, "status 'x' is neither...", "org-1-pupil-1"))

    plan = plan_sync(files, today=TODAY)

    assert [x.sourced_id for x in plan.schools[0].leavers] == [
        "org-1-pupil-3", "org-1-pupil-2",
    ]  # fmt: skip
    assert plan.hold_reasons == []
    # A row whose id is unknown may be anyone's, so nobody leaves and the sync waits.
    files.problems.append(Problem("users.csv", 9, "sourcedId is blank.", ""))

    plan = plan_sync(files, today=TODAY)

    assert plan.schools[0].leavers == [] and plan.left == 0
    assert plan.held and plan.hold_reasons == [
        "users.csv has 1 row that could not be read, so nobody is counted as leaving; "
        "correct the file."
    ]


def test_a_delta_leaves_only_its_tobedeleted_rows_and_no_users_file_none(school):
    spec = school_spec(pupils=10, classes=1)
    synced(spec)
    delta = spec.without(*[p.sourced_id for p in spec.pupils[1:]])
    delta.pupils[0] = replace(delta.pupils[0], status="tobedeleted",
                              modified="2026-09-02T08:00:00.000Z")  # fmt: skip
    delta.modes = {"users": "delta", "enrollments": "delta", "classes": "delta"}
    delta.enrolments = []

    plan = planned(delta)
    assert [x.sourced_id for x in plan.schools[0].leavers] == ["org-1-pupil-1"]
    assert not plan.held  # 1 of 10 is not more than 10%

    delta.modes["users"] = "absent"
    assert planned(delta).schools[0].leavers == []


def test_forty_percent_of_a_schools_pupils_missing_is_held(school):
    spec = school_spec(pupils=10, classes=2)
    synced(spec)

    plan = planned(spec.without(*[f"org-1-pupil-{n}" for n in range(1, 5)]))

    (mine,) = plan.schools
    assert mine.left == 4
    assert mine.hold_reasons[0].startswith("4 of the school's 10 pupils would leave (40%)")
    assert mine.hold_reasons[1] == (
        "8 of the school's 20 class places would change (40%), more than the 25% a sync "
        "applies without an admin."
    )


def test_a_first_sync_is_never_held_for_its_size(school, settings):
    settings.ROSTER_HOLD_CHANGES_PERCENT = 0
    plan = planned(school_spec(pupils=30, classes=3))
    assert plan.joined == 30 and not plan.held


# Delta -------------------------------------------------------------------------------------


def test_a_delta_row_no_newer_than_the_last_applied_changes_nothing(school):
    spec = school_spec(pupils=3, classes=1)
    synced(spec)
    delta = RosterSpec(schools=spec.schools, pupils=[
        replace(spec.pupils[0], family_name="Old"),
        replace(spec.pupils[1], family_name="New", modified="2026-09-03T08:00:00.000Z"),
    ], modes={"users": "delta", "enrollments": "absent", "classes": "absent"})  # fmt: skip

    plan = planned(delta)

    assert [(c.sourced_id, c.details) for c in plan.schools[0].changes] == [
        ("org-1-pupil-2", {"last_name": "New"})
    ]


def test_a_delta_of_enrolments_joins_and_leaves_only_what_it_names(school):
    spec = school_spec(pupils=4, classes=2)
    synced(spec)
    delta = RosterSpec(schools=spec.schools, classes=spec.classes, enrolments=[
        ("org-1-class-2", "org-1-pupil-1", "student"),
        ("org-1-class-1", "org-1-pupil-3", "student", "tobedeleted"),
    ], modes={"users": "absent", "enrollments": "delta", "classes": "delta"})  # fmt: skip

    plan = planned(delta)

    (mine,) = plan.schools
    class_1 = SchoolGroup.objects.get(name="07A").pk
    assert [(c.sourced_id, c.classes_joined, c.groups_left) for c in mine.changes] == [
        ("org-1-pupil-1", ["org-1-class-2"], []),
        ("org-1-pupil-3", [], [class_1]),
    ]
    assert mine.leavers == [] and mine.new_classes == [] and mine.class_changes == []
    plan_apply(plan)
    again = planned(delta).schools[0]
    assert again.changes == [] and again.staff == []


def test_many_pupils_changing_class_is_held_without_anyone_leaving(school):
    spec = school_spec(pupils=10, classes=2)
    synced(spec)
    moved = {f"org-1-pupil-{n}" for n in (1, 3, 5)}  # from class 1 to class 2
    spec.enrolments = [
        ("org-1-class-2", e[1], e[2]) if e[1] in moved else e for e in spec.enrolments
    ]

    plan = planned(spec)

    (mine,) = plan.schools
    assert (mine.left, mine.changed, mine.enrolments_changed, mine.enrolments_before) == (
        0, 3, 6, 20,
    )  # fmt: skip
    assert mine.hold_reasons == [
        "6 of the school's 20 class places would change (30%), more than the 25% a sync "
        "applies without an admin."
    ]


def test_a_delta_class_row_no_newer_than_the_last_applied_changes_nothing(school):
    spec = school_spec(pupils=2, classes=2)
    synced(spec)
    old, new = spec.classes
    delta = RosterSpec(schools=spec.schools, classes=[
        replace(old, title="Stale name"),
        replace(new, title="New name", modified="2026-09-05T08:00:00.000Z"),
    ], modes={"users": "absent", "enrollments": "absent", "classes": "delta"})  # fmt: skip

    plan = planned(delta)

    assert [(c.sourced_id, c.name) for c in plan.schools[0].class_changes] == [
        ("org-1-class-2", "New name")
    ]


# Classes -----------------------------------------------------------------------------------


def test_classes_take_their_kind_name_level_and_year_from_the_files(school):
    spec = school_spec(pupils=3, classes=1, grade="03", year_of_birth=2018)
    # A US school year, from August; its spring term is the class's.
    spec.terms = [Term("year-1", "SY 26-27", date(2026, 8, 12), date(2027, 6, 4), "2027")]
    spec.classes[0] = replace(spec.classes[0], term="year-1")
    spec.classes.append(Klass("tutor-1", "T" * 120, "org-1", term="spring",
                              class_type="homeroom"))  # fmt: skip
    spec.enrolments += [("tutor-1", p.sourced_id, "student") for p in spec.pupils]
    files = file_set(spec)
    files.sessions["spring"] = AcademicSession(
        "spring", "active", "Spring", "term", date(2027, 1, 5), date(2027, 6, 4), "2027",
        parent_id="year-1",
    )  # fmt: skip

    plan = plan_sync(files, today=TODAY)

    new = {c.sourced_id: c for c in plan.schools[0].new_classes}
    assert (new["tutor-1"].name, new["tutor-1"].kind) == ("T" * 100, SchoolGroup.Kind.TUTOR_GROUP)
    # No grades of its own: its pupils' level.
    assert (new["tutor-1"].level, new["tutor-1"].academic_year) == (Level.PRIMARY, YEAR)
    assert new["org-1-class-1"].academic_year == YEAR
    assert new["org-1-class-1"].name == "03A"
    assert new[year_group(school, "03")].name == "Year 3"


def test_a_class_named_as_a_hand_made_group_is_told_apart(school):
    make_group("07A", school=school)
    make_group("Year 7", school=school, kind=SchoolGroup.Kind.YEAR_GROUP)

    plan = planned(school_spec(pupils=2, classes=1))

    assert [c.name for c in plan.schools[0].new_classes] == [
        "07A (org-1-class-1)", "Year 7 (roster)",
    ]  # fmt: skip


def test_a_class_the_roster_renames_is_a_class_change(school):
    spec = school_spec(pupils=2, classes=2)
    synced(spec)
    spec.classes[0] = replace(spec.classes[0], title="7 Maths", class_type="homeroom")
    group = SchoolGroup.objects.get(name="07A")

    plan = planned(spec)

    assert [(c.sourced_id, c.group_id, c.name, c.kind, c.level) for c in
            plan.schools[0].class_changes] == [
        ("org-1-class-1", group.pk, "7 Maths", SchoolGroup.Kind.TUTOR_GROUP, Level.SECONDARY)
    ]  # fmt: skip
    assert plan.schools[0].changes == [] and plan.schools[0].new_classes == []


# September ---------------------------------------------------------------------------------


def test_september_archives_last_years_classes_moves_pupils_on_and_is_held(school):
    spec = school_spec(pupils=4, classes=1, grade="Y6", year_of_birth=2015)
    synced(spec)
    old_class = SchoolGroup.objects.get(name="Y6A")
    old_year = SchoolGroup.objects.get(name="Year 6")
    next_year = Term("term-2027", "2027/28", date(2027, 9, 1), date(2028, 7, 20), "2028")
    moved_on = RosterSpec(
        schools=spec.schools,
        pupils=[replace(p, grade="Y7") for p in spec.pupils],
        teachers=spec.teachers,
        classes=[Klass("org-1-class-7", "7A", "org-1", term="term-2027", grades=("Y7",))],
        enrolments=[("org-1-class-7", p.sourced_id, "student") for p in spec.pupils]
        + [("org-1-class-7", "org-1-teacher-1", "teacher")],
        terms=[next_year],
    )

    plan = plan_sync(file_set(moved_on), today=date(2027, 9, 2))

    (mine,) = plan.schools
    assert mine.new_academic_year == "2027/28"
    assert [(a.group_id, a.name, a.academic_year) for a in mine.archived] == [
        (old_class.pk, "Y6A", YEAR), (old_year.pk, "Year 6", YEAR),
    ]  # fmt: skip
    year_7 = f"{YEAR_GROUP_PREFIX}{school.pk}:Y7:2027/28"
    assert [(c.sourced_id, c.name, c.academic_year) for c in mine.new_classes] == [
        ("org-1-class-7", "7A", "2027/28"), (year_7, "Year 7", "2027/28"),
    ]  # fmt: skip
    assert len(mine.changes) == 4
    change = mine.changes[0]
    assert (change.level_from, change.level_to) == (Level.PRIMARY, Level.SECONDARY)
    assert change.classes_joined == ["org-1-class-7", year_7]
    assert change.groups_left == sorted([old_class.pk, old_year.pk])
    assert [(s.sourced_id, s.class_ids) for s in mine.staff] == [
        ("org-1-teacher-1", ["org-1-class-7"])
    ]
    assert mine.hold_reasons[0] == (
        "A new academic year (2027/28) starts: last year's classes are archived and this "
        "year's made; check the preview."
    )
    plan_apply(plan)
    again = plan_sync(file_set(moved_on), today=date(2027, 9, 2)).schools[0]
    assert (again.new_academic_year, again.changes, again.new_classes, again.staff) == (
        "", [], [], [],
    )  # fmt: skip
    assert not again.hold_reasons


# Staff -------------------------------------------------------------------------------------


def test_teachers_are_matched_by_email_given_accounts_and_never_powers(school):
    spec = school_spec(pupils=2, classes=3)
    known = make_staff("mr.known", school=school)
    known.email = "TEACHER1.org-1@School.example"
    known.save()
    make_learner("teacher2.org-1", "up-t", school=school)  # the username a new one would take
    spec.teachers[2] = replace(spec.teachers[2], email="")
    spec.teachers.append(Teacher("head-1", "Head", "Teacher", "head@school.example", "org-1",
                                 role="administrator"))  # fmt: skip

    plan = planned(spec)

    (mine,) = plan.schools
    assert [(s.sourced_id, s.user_id, s.username, s.class_ids) for s in mine.staff] == [
        ("org-1-teacher-1", known.pk, "", ["org-1-class-1"]),
        ("org-1-teacher-2", None, "teacher2.org-12", ["org-1-class-2"]),
    ]
    assert [(p.line, p.reason) for p in plan.problems] == [
        (6, "email: the teacher has no email address, which their account and single sign-on "
            "need."),
    ]  # fmt: skip


def test_a_teacher_of_another_school_matched_by_email_gets_the_teacher_role_here(school):
    elm = School.objects.create(code="ELM", name="Elm Academy")
    spec = school_spec(pupils=2, classes=2)
    elsewhere = make_staff("mr.elm", role=StaffRole.TEACHER, school=elm)
    User.objects.filter(pk=elsewhere.pk).update(email="teacher1.org-1@school.example")
    admin = make_staff("ms.admin", role=StaffRole.ADMIN, school=school)
    User.objects.filter(pk=admin.pk).update(email="teacher2.org-1@school.example")

    plan = planned(spec)

    (mine,) = plan.schools
    assert [(m.user_id, m.role_added) for m in mine.staff] == [
        (elsewhere.pk, True), (admin.pk, False),
    ]  # fmt: skip
    (linked,) = [shown for shown in school_lists(mine) if shown.key == "linked_staff"]
    assert linked.names == [
        "Teacher Org-11 (teacher1.org-1@school.example): teacher role added in Our school",
        "Teacher Org-12 (teacher2.org-1@school.example)",
    ]
    really_applied(plan)
    assert SchoolRole.objects.get(user=elsewhere, school=school).role == StaffRole.TEACHER
    assert SchoolRole.objects.get(user=elsewhere, school=elm).role == StaffRole.TEACHER
    assert SchoolRole.objects.get(user=admin, school=school).role == StaffRole.ADMIN
    changed = AuditEvent.objects.filter(action=AuditEvent.Action.STAFF_CHANGED)
    roles = [(e.detail["account"], e.detail.get("role"), e.detail.get("school")) for e in changed]
    assert ("mr.elm", StaffRole.TEACHER, "SCHOOL") in roles
    assert [account for account, role, _ in roles if role] == ["mr.elm"]


def test_unchanged_teachers_are_not_listed_and_a_new_class_lists_them(school):
    spec = school_spec(pupils=2, classes=2)
    synced(spec)
    assert planned(spec).schools[0].staff == []

    spec.enrolments.append(("org-1-class-2", "org-1-teacher-1", "teacher"))
    (member,) = planned(spec).schools[0].staff
    teacher = RosterPerson.objects.get(sourced_id="org-1-teacher-1").user_id
    assert (member.sourced_id, member.user_id, member.class_ids) == (
        "org-1-teacher-1", teacher, ["org-1-class-1", "org-1-class-2"],
    )  # fmt: skip


def test_a_linked_teacher_whose_role_staff_took_away_or_whose_account_they_closed_stays_so(
    school,
):
    spec = school_spec(pupils=2, classes=2)
    synced(spec)
    first = RosterPerson.objects.get(sourced_id="org-1-teacher-1").user
    second = RosterPerson.objects.get(sourced_id="org-1-teacher-2").user
    SchoolRole.objects.filter(user=first, school=school).delete()  # taken away in the portal
    User.objects.filter(pk=second.pk).update(is_active=False)  # closed in the portal
    spec.enrolments += [
        ("org-1-class-2", "org-1-teacher-1", "teacher"),
        ("org-1-class-1", "org-1-teacher-2", "teacher"),
    ]

    (mine,) = planned(spec).schools

    assert [(m.sourced_id, m.user_id, m.role_added) for m in mine.staff] == [
        ("org-1-teacher-1", first.pk, False)
    ]
    (closed,) = [p for p in planned(spec).problems if p.sourced_id == "org-1-teacher-2"]
    assert "account in the portal is closed" in closed.reason


# The whole sync ----------------------------------------------------------------------------


def test_an_empty_or_cut_off_file_holds_the_whole_sync_and_the_readers_problems_stay(school):
    files = file_set(school_spec(pupils=2, classes=1))
    files.empty_files = ["enrollments.csv"]
    files.truncated_files = ["users"]
    files.problems = [Problem("classes.csv", 3, "classType: lecture is not a class type.")]

    plan = plan_sync(files, today=TODAY)

    assert plan.held and plan.schools[0].hold_reasons == []
    assert plan.hold_reasons == [
        "enrollments.csv has no rows although the manifest gives it whole (bulk): applied, it "
        "would say everyone left; check the export.",
        "users.csv is cut off at its end (its last line is incomplete); export the files again.",
    ]
    assert reasons(plan) == ["classType: lecture is not a class type."]


def test_planning_reads_the_database_in_a_few_queries_whatever_its_size(school):
    small, large = school_spec(pupils=5, classes=1), school_spec(pupils=60, classes=4)
    with CaptureQueriesContext(connection) as few:
        planned(small)
    with CaptureQueriesContext(connection) as more:
        assert planned(large).joined == 60
    assert len(more) == len(few) <= 15
    synced(large)
    large.pupils[0] = replace(large.pupils[0], family_name="Changed")
    with CaptureQueriesContext(connection) as second:
        assert planned(large).changed == 1
    assert len(second) <= 15
