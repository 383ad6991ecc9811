"""The commands that set up a trust's schools and staff: add_school, add_staff --school."""

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from accounts.access import schools_of, staff_role, trust_role
from accounts.models import SchoolRole, StaffRole
from classes.models import SchoolGroup
from learners.models import Learner
from schools.context import working_in
from schools.management.commands.add_school import Command as AddSchool
from schools.models import PartnerSettings, School
from tests.factories import make_learner, make_staff

STAFF_PASSWORD = "quiet-lantern-orchard-7"


def run(command: str, *args: str) -> str:
    out = io.StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def two_schools(db) -> tuple[School, School]:
    """The migration's school renamed as a primary, and a secondary beside it."""
    run("add_school", "SCHOOL", "--name", "Oak Primary")
    run("add_school", "100002", "--name", "Ash Academy")
    return School.objects.get(code="SCHOOL"), School.objects.get(code="100002")


@pytest.fixture(autouse=True)
def staff_password(monkeypatch):
    monkeypatch.setenv("STAFF_PASSWORD", STAFF_PASSWORD)


def roles_of(user: User) -> dict[str, str]:
    """The account's role in each school, by the school's code."""
    return dict(SchoolRole.objects.filter(user=user).values_list("school__code", "role"))


def role_working_in(user: User, school: School) -> str | None:
    """The account's role while working in that school, as its pages see it."""
    user = User.objects.get(pk=user.pk)  # fresh: no role remembered from an earlier read
    with working_in(school.pk):
        return staff_role(user)


# add_school ------------------------------------------------------------------------------------


def test_add_school_adds_it_with_its_own_settings_and_prints_it(db):
    output = run("add_school", "100001", "--name", "Oak Primary")

    school = School.objects.get(code="100001")
    assert school.name == "Oak Primary"
    assert output == f'School 100001 "Oak Primary" (id {school.pk}): added.\n'
    settings = PartnerSettings.objects.get(school=school)
    assert settings.alert_escalate_minutes == 30 and not settings.withhold_from_trust
    assert len(School.everyone()) == 2


def test_add_school_run_again_changes_nothing_whatever_the_codes_capitals(db):
    run("add_school", "urn-7", "--name", "Oak Primary")
    before = list(School.objects.values_list("pk", "code", "name"))

    output = run("add_school", " URN-7 ", "--name", "Oak  Primary")

    assert "already there, unchanged" in output and "urn-7" in output
    assert list(School.objects.values_list("pk", "code", "name")) == before
    assert PartnerSettings.objects.filter(school__code="urn-7").count() == 1


def test_add_school_with_another_name_renames_it_and_says_so(db):
    run("add_school", "100001", "--name", "Oak Primary")

    output = run("add_school", "100001", "--name", "Oak Primary School")

    school = School.objects.get(code="100001")
    assert school.name == "Oak Primary School"
    assert 'renamed from "Oak Primary"' in output and f"(id {school.pk})" in output
    assert School.objects.count() == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("  ", "--name", "Oak Primary"), "needs a code"),
        (("100001", "--name", "   "), "needs a name"),
        (("x" * 33, "--name", "Oak Primary"), "at most 32 characters"),
    ],
)
def test_add_school_refuses_a_blank_code_or_name(db, args, message):
    with pytest.raises(CommandError, match=message):
        run("add_school", *args)
    assert School.objects.count() == 1


def test_a_urn_beside_the_migrations_school_adds_a_second_and_the_first_keeps_its_rows(db):
    first = School.objects.get()
    assert (first.code, first.name) == ("SCHOOL", "Our school")
    learner = make_learner("lee.learner", "u-lee")

    run("add_school", "100002", "--name", "Ash Academy")

    assert School.objects.count() == 2
    assert Learner.objects.get(pk=learner.pk).school == first
    assert School.objects.get(pk=first.pk).name == "Our school"
    # The help says how to give the first school its real name.
    help_text = AddSchool().create_parser("manage.py", "add_school").format_help()
    assert 'add_school SCHOOL --name "Oak Primary"' in " ".join(help_text.split())


# add_staff --school ----------------------------------------------------------------------------


def test_with_one_school_add_staff_needs_no_school_and_prints_as_before(db):
    output = run("add_staff", "tara.teacher", "--email", "t@school.example", "--role", "teacher")

    assert output == "Added tara.teacher as Teacher.\n"
    tara = User.objects.get(username="tara.teacher")
    assert roles_of(tara) == {"SCHOOL": StaffRole.TEACHER}
    assert role_working_in(tara, School.objects.get()) == StaffRole.TEACHER


def test_with_several_schools_a_school_role_needs_a_school(two_schools):
    with pytest.raises(CommandError, match=r"several schools.*--school CODE.*100002.*SCHOOL"):
        run("add_staff", "tara.teacher", "--email", "t@school.example", "--role", "teacher")
    assert not User.objects.filter(username="tara.teacher").exists()


def test_a_role_is_held_in_each_school_named(two_schools):
    oak, ash = two_schools

    output = run(
        "add_staff", "dee.dsl", "--email", "dee@school.example", "--role", "dsl",
        "--school", "schoOL", "--school", "100002",
    )  # fmt: skip

    dee = User.objects.get(username="dee.dsl")
    assert roles_of(dee) == {"SCHOOL": StaffRole.DSL, "100002": StaffRole.DSL}
    assert role_working_in(dee, oak) == role_working_in(dee, ash) == StaffRole.DSL
    where = "in Oak Primary (SCHOOL) and Ash Academy (100002)"
    assert output == f"Added dee.dsl as Designated safeguarding lead {where}.\n"


def test_run_again_with_another_school_adds_a_role_there_and_keeps_the_first(two_schools):
    oak, ash = two_schools
    run(
        "add_staff", "tara.teacher", "--email", "t@school.example", "--role", "teacher",
        "--school", "SCHOOL",
    )  # fmt: skip

    output = run(
        "add_staff", "tara.teacher", "--email", "t@school.example", "--role", "head_of_year",
        "--school", "100002",
    )  # fmt: skip

    tara = User.objects.get(username="tara.teacher")
    assert roles_of(tara) == {"SCHOOL": StaffRole.TEACHER, "100002": StaffRole.HEAD_OF_YEAR}
    assert role_working_in(tara, oak) == StaffRole.TEACHER
    assert role_working_in(tara, ash) == StaffRole.HEAD_OF_YEAR
    assert [school.code for school in schools_of(tara)] == ["100002", "SCHOOL"]
    assert "Updated tara.teacher: Head of Year (pastoral lead) in Ash Academy (100002)." in output


def test_a_group_is_looked_up_in_the_school_given(two_schools):
    oak, ash = two_schools
    with working_in(oak.pk):
        oak_7b = SchoolGroup.objects.create(name="7B", level="LOA_PARTNER_LEVEL2")
    with working_in(ash.pk):
        ash_7b = SchoolGroup.objects.create(name="7B", level="LOA_PARTNER_LEVEL2")

    run(
        "add_staff", "tara.teacher", "--email", "t@school.example", "--role", "teacher",
        "--school", "100002", "--group", "7b",
    )  # fmt: skip
    run(
        "add_staff", "tara.teacher", "--email", "t@school.example", "--role", "teacher",
        "--school", "SCHOOL", "--group", "7B", "--group", "Year 7",
    )  # fmt: skip

    tara = User.objects.get(username="tara.teacher")
    assert oak_7b.school == oak and ash_7b.school == ash
    assert set(tara.school_groups.all()) == {
        ash_7b, oak_7b, SchoolGroup.objects.get(name="Year 7", school=oak)
    }  # fmt: skip
    with pytest.raises(CommandError, match="Groups belong to one school"):
        run(
            "add_staff", "tara.teacher", "--email", "t@school.example", "--role", "teacher",
            "--school", "SCHOOL", "--school", "100002", "--group", "7B",
        )  # fmt: skip


def test_an_unknown_school_code_is_named(two_schools):
    with pytest.raises(CommandError, match=r"No school has the code '999999'"):
        run(
            "add_staff", "tara.teacher", "--email", "t@school.example", "--role", "teacher",
            "--school", "100002", "--school", "999999",
        )  # fmt: skip
    assert not User.objects.filter(username="tara.teacher").exists()


@pytest.mark.parametrize(
    "role", [StaffRole.TRUST_ADMIN, StaffRole.TRUST_SAFEGUARDING_LEAD, StaffRole.TRUST_VIEWER]
)
def test_a_trust_role_needs_no_school(two_schools, role):
    output = run("add_staff", "tess.trust", "--email", "tess@trust.example", "--role", role)

    tess = User.objects.get(username="tess.trust")
    assert trust_role(tess) == role
    assert not SchoolRole.objects.filter(user=tess).exists()
    assert output == f"Added tess.trust as {StaffRole(role).label}.\n"


@pytest.mark.parametrize("extra", [("--school", "100002"), ("--group", "7B")])
def test_a_trust_role_refuses_a_school_or_a_group(two_schools, extra):
    with pytest.raises(CommandError, match="trust role, held above every school"):
        run(
            "add_staff", "tess.trust", "--email", "tess@trust.example", "--role", "trust_admin",
            *extra,
        )  # fmt: skip
    assert not User.objects.filter(username="tess.trust").exists()


def test_a_trust_role_given_to_a_teacher_keeps_their_groups(two_schools):
    oak, _ash = two_schools
    run(
        "add_staff", "tara.teacher", "--email", "t@school.example", "--role", "teacher",
        "--school", "SCHOOL", "--group", "7B",
    )  # fmt: skip

    run("add_staff", "tara.teacher", "--email", "t@school.example", "--role", "trust_viewer")

    tara = User.objects.get(username="tara.teacher")
    assert trust_role(tara) == StaffRole.TRUST_VIEWER
    assert list(tara.school_groups.values_list("name", flat=True)) == ["7B"]


def test_a_school_role_given_to_a_trust_admin_ends_the_trust_role_and_says_so(two_schools):
    oak, ash = two_schools
    make_staff("tess.trust", role=StaffRole.TRUST_ADMIN)

    output = run(
        "add_staff", "tess.trust", "--email", "tess@trust.example", "--role", "teacher",
        "--school", "100002",
    )  # fmt: skip

    tess = User.objects.get(username="tess.trust")
    assert trust_role(tess) is None
    assert roles_of(tess) == {"100002": StaffRole.TEACHER}
    assert role_working_in(tess, ash) == StaffRole.TEACHER
    assert "No longer Trust admin." in output
