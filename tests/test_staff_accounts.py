"""Staff accounts and roles: add_staff, the staff pages, and the partner's settings."""

import io

import pytest
from allauth.socialaccount.models import SocialAccount
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from accounts.access import sees_results, staff_role
from accounts.models import StaffRole
from audit.models import AuditEvent
from classes.models import SchoolGroup
from schools.models import PartnerSettings
from tests.factories import (
    PASSWORD,
    completed,
    make_group,
    make_learner,
    make_sign_in_lock,
    make_staff,
    put_in_group,
    settings_form,
    signed_in,
)
from tests.journeys import page_showing

STAFF_PASSWORD = "Sturdy-Lantern-Harbour-7"


def add_staff(*args: str) -> str:
    out = io.StringIO()
    call_command("add_staff", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def admin(db) -> User:
    return make_staff("ada.admin", role=StaffRole.ADMIN)


# add_staff -------------------------------------------------------------------------------------


@pytest.mark.backend  # group named in another case (iexact)
def test_add_staff_makes_an_account_with_its_role_groups_and_password(db, monkeypatch):
    monkeypatch.setenv("STAFF_PASSWORD", STAFF_PASSWORD)
    existing = make_group("7B")

    output = add_staff(
        "tara.teacher", "--email", "tara@school.example", "--role", "teacher",
        "--group", "7b", "--group", "Year 7",
    )  # fmt: skip

    tara = User.objects.get(username="tara.teacher")
    assert staff_role(tara) == StaffRole.TEACHER and tara.email == "tara@school.example"
    assert set(tara.school_groups.values_list("name", flat=True)) == {"7B", "Year 7"}
    assert existing in tara.school_groups.all()
    assert Client().login(username="tara.teacher", password=STAFF_PASSWORD)
    assert "Added tara.teacher as Teacher." in output and STAFF_PASSWORD not in output
    assert AuditEvent.objects.filter(action=AuditEvent.Action.STAFF_ADDED).exists()


def test_add_staff_makes_a_head_of_years_missing_group_a_year_group(db, monkeypatch):
    monkeypatch.setenv("STAFF_PASSWORD", STAFF_PASSWORD)

    add_staff("hugo.hoy", "--email", "h@school.example", "--role", "head_of_year", "--group", "Y9")

    assert SchoolGroup.objects.get(name="Y9").kind == SchoolGroup.Kind.YEAR_GROUP


def test_add_staff_prompts_for_the_password_in_a_terminal(db, monkeypatch):
    monkeypatch.delenv("STAFF_PASSWORD", raising=False)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    answers = iter([STAFF_PASSWORD, STAFF_PASSWORD])
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(answers))

    add_staff("dee.dsl", "--email", "dee@school.example", "--role", "dsl")

    assert Client().login(username="dee.dsl", password=STAFF_PASSWORD)


def test_add_staff_without_a_password_or_a_terminal_says_what_to_do(db, monkeypatch):
    monkeypatch.delenv("STAFF_PASSWORD", raising=False)
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)

    with pytest.raises(CommandError, match="Set STAFF_PASSWORD"):
        add_staff("dee.dsl", "--email", "dee@school.example", "--role", "dsl")
    assert not User.objects.filter(username="dee.dsl").exists()


def test_add_staff_refuses_a_weak_password_and_a_bad_role(db, monkeypatch):
    monkeypatch.setenv("STAFF_PASSWORD", "12345678")

    with pytest.raises(CommandError, match="too common|entirely numeric"):
        add_staff("dee.dsl", "--email", "dee@school.example", "--role", "dsl")
    with pytest.raises(CommandError):
        add_staff("dee.dsl", "--email", "dee@school.example", "--role", "headteacher")


def test_add_staff_run_again_changes_the_role_and_keeps_the_account(db, monkeypatch):
    monkeypatch.setenv("STAFF_PASSWORD", STAFF_PASSWORD)
    add_staff("dee.dsl", "--email", "dee@school.example", "--role", "deputy_dsl")

    add_staff("dee.dsl", "--email", "dee@school.example", "--role", "dsl")

    assert User.objects.filter(username="dee.dsl").count() == 1
    assert staff_role(User.objects.get(username="dee.dsl")) == StaffRole.DSL


def test_add_staff_never_turns_a_learners_account_into_staff(db, monkeypatch):
    monkeypatch.setenv("STAFF_PASSWORD", STAFF_PASSWORD)
    learner = make_learner("lee.learner", "u-lee")

    with pytest.raises(CommandError, match="not staff"):
        add_staff("lee.learner", "--email", "l@school.example", "--role", "admin")
    assert staff_role(User.objects.get(pk=learner.user_id)) is None


def test_a_superuser_counts_as_a_partner_admin(db):
    root = User.objects.create_superuser("root.admin", password=PASSWORD)

    assert staff_role(root) == StaffRole.ADMIN
    assert signed_in(root).get("/staff/").status_code == 200


# The staff pages --------------------------------------------------------------------------------


def test_an_admin_adds_a_staff_account_with_a_role_and_groups(admin):
    class_7b = make_group("7B")

    response = signed_in(admin).post(
        "/staff/new/",
        {"username": "tom.teacher", "email": "tom@school.example", "role": "teacher",
         "groups": [class_7b.pk], "password1": STAFF_PASSWORD, "password2": STAFF_PASSWORD},
    )  # fmt: skip

    tom = User.objects.get(username="tom.teacher")
    assert response.status_code == 302
    assert staff_role(tom) == StaffRole.TEACHER and list(tom.school_groups.all()) == [class_7b]
    event = AuditEvent.objects.get(action=AuditEvent.Action.STAFF_ADDED)
    assert event.actor == admin and event.detail == {
        "account": "tom.teacher", "role": "teacher", "groups": ["7B"]
    }  # fmt: skip
    assert STAFF_PASSWORD not in str(event.detail)


def test_an_admin_changes_a_role_and_it_is_audited(admin):
    tom = make_staff("tom.teacher", role=StaffRole.TEACHER)

    signed_in(admin).post(
        f"/staff/{tom.pk}/", {"email": "tom@school.example", "role": "head_of_year",
                              "is_active": "on"}
    )  # fmt: skip

    tom = User.objects.get(pk=tom.pk)
    assert staff_role(tom) == StaffRole.HEAD_OF_YEAR
    event = AuditEvent.objects.get(action=AuditEvent.Action.STAFF_CHANGED)
    assert event.detail["role"] == "head_of_year" and event.actor == admin


def test_an_admin_cannot_take_away_their_own_admin_role(admin):
    response = signed_in(admin).post(
        f"/staff/{admin.pk}/", {"email": "ada@school.example", "role": "teacher", "is_active": "on"}
    )

    assert "You cannot take away your own admin role" in response.content.decode()
    assert staff_role(User.objects.get(pk=admin.pk)) == StaffRole.ADMIN


def test_an_account_that_may_no_longer_sign_in_cannot(admin):
    tom = make_staff("tom.teacher", role=StaffRole.TEACHER)
    assert Client().login(username="tom.teacher", password=PASSWORD)  # until the change

    response = signed_in(admin).post(
        f"/staff/{tom.pk}/", {"email": "t@school.example", "role": "teacher"}
    )

    assert response.status_code == 302
    assert "Cannot sign in" in signed_in(admin).get(response.url).content.decode()
    assert not Client().login(username="tom.teacher", password=PASSWORD)


def linked_teacher() -> User:
    """A teacher whose school account (Google) is linked to their portal account by email."""
    tom = make_staff("tom.teacher", role=StaffRole.TEACHER)
    tom.email = "tom@school.example"
    tom.save(update_fields=["email"])
    SocialAccount.objects.create(user=tom, provider="google", uid="10769150350006150715113082367")
    return tom


def test_changing_a_members_email_unlinks_their_school_account_and_says_so(admin):
    tom = linked_teacher()

    response = signed_in(admin).post(
        f"/staff/{tom.pk}/", {"email": "someone.else@school.example", "role": "teacher",
                              "is_active": "on"}
    )  # fmt: skip

    assert response.status_code == 302
    assert User.objects.get(pk=tom.pk).email == "someone.else@school.example"
    assert not SocialAccount.objects.filter(user=tom).exists()
    event = AuditEvent.objects.get(action=AuditEvent.Action.STAFF_CHANGED)
    assert event.detail["email"] == "changed"
    assert event.detail["school_identity_unlinked"] is True


@pytest.mark.parametrize("email", ["tom@school.example", "Tom@School.example"])
def test_a_save_that_keeps_the_email_keeps_the_school_account(admin, email):
    tom = linked_teacher()

    response = signed_in(admin).post(
        f"/staff/{tom.pk}/", {"email": email, "role": "head_of_year", "is_active": "on"}
    )

    assert response.status_code == 302
    assert staff_role(User.objects.get(pk=tom.pk)) == StaffRole.HEAD_OF_YEAR
    assert SocialAccount.objects.filter(user=tom).count() == 1
    event = AuditEvent.objects.get(action=AuditEvent.Action.STAFF_CHANGED)
    assert "school_identity_unlinked" not in event.detail


# Who reads results ------------------------------------------------------------------------------


@pytest.fixture
def pupil_with_results(db):
    pupil = make_learner("pip.pupil", "u-pip")
    completed(pupil, "2026-09-10", risk="HIGH", areas={"Sleep": "yes"})
    return pupil


def test_by_default_a_teacher_sees_progress_but_not_results(pupil_with_results):
    class_7b = make_group("7B")
    put_in_group(class_7b, pupil_with_results)
    teacher = make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[class_7b])

    page = signed_in(teacher).get(f"/learners/{pupil_with_results.pk}/").content.decode()

    assert "Completed" in page and "HIGH" not in page and "Latest results" not in page
    assert "Results are shown to the learner's pastoral staff" in page
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.RESULTS_VIEWED).exists()


def test_the_partner_lets_teachers_read_results_and_it_is_audited(admin, pupil_with_results):
    class_7b = make_group("7B")
    put_in_group(class_7b, pupil_with_results)
    teacher = make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[class_7b])

    signed_in(admin).post("/settings/", settings_form(teachers_see_results=True))

    assert PartnerSettings.current().teachers_see_results
    assert sees_results(User.objects.get(pk=teacher.pk))
    page = signed_in(teacher).get(f"/learners/{pupil_with_results.pk}/").content.decode()
    assert "HIGH" in page and "Latest results" in page
    event = AuditEvent.objects.get(action=AuditEvent.Action.SETTINGS_CHANGED)
    assert event.detail == {"teachers_see_results": True}


def test_an_admin_keeps_records_without_reading_results_unless_the_partner_says(
    admin, pupil_with_results
):
    client = signed_in(admin)
    record = f"/learners/{pupil_with_results.pk}/"
    assert "HIGH" not in page_showing(client, record, f"<h1>{pupil_with_results.display_name}</h1>")

    client.post("/settings/", settings_form(admins_see_results=True))

    assert "HIGH" in signed_in(admin).get(f"/learners/{pupil_with_results.pk}/").content.decode()


def test_the_partner_chooses_what_learners_read_and_who_they_talk_to_audited(admin):
    response = signed_in(admin).post(
        "/settings/",
        settings_form(
            show_scores_to_learners=True,
            school_contact="Mrs Khan, our safeguarding lead, in room 12",
            helplines="Samaritans: call 116 123\nChildline: call 0800 1111",
        ),
    )

    assert response.status_code == 302
    current = PartnerSettings.current()
    assert current.show_scores_to_learners and not current.hide_results_from_learners
    assert current.school_contact == "Mrs Khan, our safeguarding lead, in room 12"
    assert current.helplines.splitlines() == [
        "Samaritans: call 116 123",
        "Childline: call 0800 1111",
    ]
    event = AuditEvent.objects.get(action=AuditEvent.Action.SETTINGS_CHANGED)
    assert set(event.detail) == {"show_scores_to_learners", "school_contact", "helplines"}
    page = signed_in(admin).get("/settings/").content.decode()
    assert "What learners see of their results" in page
    assert "Learners see their LOA score and risk level" in page


def test_the_helplines_learners_are_shown_cannot_be_emptied(admin):
    response = signed_in(admin).post("/settings/", settings_form(helplines="  "))

    assert response.status_code == 200
    assert "Childline" in PartnerSettings.current().helplines
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.SETTINGS_CHANGED).exists()


@pytest.mark.backend  # the username normal form
def test_staff_usernames_take_the_normal_form_learners_do(db, monkeypatch):
    monkeypatch.setenv("STAFF_PASSWORD", STAFF_PASSWORD)

    add_staff("Ｔara.Teacher", "--email", "tara@school.example", "--role", "teacher")

    assert User.objects.filter(username="tara.teacher").exists()
    assert Client().login(username="TARA.teacher", password=STAFF_PASSWORD)
    with pytest.raises(CommandError, match="one alphabet"):
        add_staff("tаra", "--email", "t@school.example", "--role", "teacher")  # Cyrillic а


def test_a_teacher_sees_and_lifts_only_their_own_pupils_sign_in_locks(admin):
    class_7b = make_group("7B")
    mine, other = make_learner("mia.mine", "u-mia"), make_learner("oli.other", "u-oli")
    put_in_group(class_7b, mine)
    teacher = make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[class_7b])
    colleague = make_staff("tom.teacher", role=StaffRole.TEACHER)
    locks = [
        make_sign_in_lock(kind="account", user=mine.user),
        make_sign_in_lock(kind="account", user=other.user),
        make_sign_in_lock(kind="account", user=colleague),
        make_sign_in_lock(kind="address", address="192.0.2.10"),
    ]
    client = signed_in(teacher)

    page = client.get("/sign-in-locks/").content.decode()

    assert "Mia Pupil" in page and "Oli Pupil" not in page
    assert "tom.teacher" not in page and "192.0.2.10" not in page
    assert client.post(f"/sign-in-locks/{locks[1].pk}/lift/").status_code == 404
    assert client.post(f"/sign-in-locks/{locks[0].pk}/lift/").status_code == 302
    every = signed_in(admin).get("/sign-in-locks/").content.decode()
    assert "Oli Pupil" in every and "tom.teacher" in every and "192.0.2.10" in every


def test_an_account_that_can_no_longer_sign_in_keeps_its_role_on_the_staff_pages(admin):
    dee = make_staff("dee.dsl", role=StaffRole.DSL)
    User.objects.filter(pk=dee.pk).update(is_active=False)
    client = signed_in(admin)

    listing = client.get("/staff/").content.decode()
    form = client.get(f"/staff/{dee.pk}/").content.decode()

    row = listing.split("dee.dsl</span>")[1].split("</li>")[0]
    assert "Designated safeguarding lead" in row and "Cannot sign in" in row
    assert '<option value="dsl" selected>' in form


def test_the_staff_list_costs_the_same_queries_for_two_accounts_or_ten(
    admin, django_assert_max_num_queries
):
    client = signed_in(admin)
    client.get("/staff/")
    for number in range(10):
        make_staff(f"t{number}.teacher", role=StaffRole.TEACHER, groups=[make_group(f"G{number}")])

    # Session, user (with its school roles), the schools, accounts, their groups, school
    # roles, school identities and second factors (prefetched), the upstream banner and a
    # spare: never one more per account.
    with django_assert_max_num_queries(12):
        assert client.get("/staff/").status_code == 200
