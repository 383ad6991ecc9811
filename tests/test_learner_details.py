"""Staff correct a learner's names, email, date of birth or level: in the portal only, audited."""

import re
from datetime import date, timedelta

import pytest
import responses
from allauth.socialaccount.models import SocialAccount
from django.core.exceptions import PermissionDenied
from django.test import Client

from accounts.models import StaffRole
from audit.models import AuditEvent
from dashboard.models import CohortResult
from learners.models import Learner, Level
from learners.services import learner_details_change
from privacy.services import learner_erase
from tests.factories import completed, make_group, make_staff, put_in_group

# The edit form's fields, every one valid and every one changed from make_learner's.
CORRECTED = {
    "first_name": "Leigh",
    "last_name": "Learner-Smith",
    "email": "leigh@example.org",
    "dob": "2009-03-27",
    "level": Level.FURTHER_EDUCATION,
}


def edit(client: Client, learner: Learner, **changes: str):
    return client.post(f"/learners/{learner.pk}/edit/", {**CORRECTED, **changes})


def test_the_record_links_to_the_form_which_shows_the_details_as_they_are(staff_client, learner):
    record = staff_client.get(f"/learners/{learner.pk}/").content.decode()
    assert f'href="/learners/{learner.pk}/edit/"' in record
    assert "<dt>Level</dt><dd>Secondary</dd>" in record

    form = staff_client.get(f"/learners/{learner.pk}/edit/").content.decode()

    for name in ["first_name", "last_name", "email", "dob_day", "dob_month", "dob_year", "level"]:
        assert f'<label for="id_{name}"' in form
    assert "<legend" in form and "Date of birth" in form
    assert 'value="Lee"' in form
    for name, value in [("dob_day", "17"), ("dob_month", "5"), ("dob_year", "2010")]:
        assert re.search(rf'name="{name}"[^>]*value="{value}"', form), name
    assert f'<option value="{Level.SECONDARY.value}" selected>' in form


def test_the_form_says_plainly_that_changes_stay_in_the_portal(staff_client, learner):
    page = staff_client.get(f"/learners/{learner.pk}/edit/").content.decode()

    intro, fields = page.split('<form method="post" class="narrow"', 1)
    assert "Changes are saved in the portal only." in intro
    assert "not sent to the assessment service" in intro
    assert "Results already received stay as they are." in intro
    assert "a new level here does not change them" in intro
    assert 'name="first_name"' in fields


def test_staff_correct_the_details_in_the_portal_without_calling_the_service(staff_client, learner):
    with responses.RequestsMock() as upstream:  # any call upstream would fail the test
        response = edit(staff_client, learner)
        assert len(upstream.calls) == 0

    assert response.url == f"/learners/{learner.pk}/"
    learner.refresh_from_db()
    assert (learner.first_name, learner.last_name) == ("Leigh", "Learner-Smith")
    assert learner.email == "leigh@example.org" and learner.dob == date(2009, 3, 27)
    assert learner.level == Level.FURTHER_EDUCATION and learner.username == "lee.learner"
    record = staff_client.get(response.url).content.decode()
    assert "The details of Leigh Learner-Smith are saved in the portal." in record
    assert "<dt>Level</dt><dd>Further education</dd>" in record


def test_a_date_of_birth_typed_in_its_three_boxes_is_saved(staff_client, learner):
    typed = {name: value for name, value in CORRECTED.items() if name != "dob"}
    typed.update(dob_day="3", dob_month="12", dob_year="2010")
    response = staff_client.post(f"/learners/{learner.pk}/edit/", typed)

    assert response.status_code == 302
    learner.refresh_from_db()
    assert learner.dob == date(2010, 12, 3)


def test_an_email_longer_than_the_record_holds_is_refused_not_a_crash(staff_client, learner):
    too_long = "a" * 250 + "@example.org"  # a valid address, past the column's 254

    response = edit(staff_client, learner, email=too_long)

    assert response.status_code == 200
    assert "at most 254 characters" in " ".join(response.context["form"].errors["email"])
    learner.refresh_from_db()
    assert learner.email != too_long


def test_the_audit_trail_names_the_fields_changed_but_not_their_values(
    staff_client, staff, learner
):
    edit(staff_client, learner, first_name="Lee", last_name="Pupil", level=Level.SECONDARY)

    event = AuditEvent.objects.get(action=AuditEvent.Action.LEARNER_CHANGED)
    assert event.actor == staff and event.learner == learner
    assert event.detail == {"fields": ["email", "dob"]}


def link_school_account(learner: Learner) -> None:
    """The pupil's school account (Google), linked to their portal account by their email."""
    learner.email = "lee@school.example"
    learner.save(update_fields=["email"])
    SocialAccount.objects.create(user=learner.user, provider="google", uid="1076915035000615")


def test_a_new_email_unlinks_the_pupils_school_account_and_the_trail_says_so(staff_client, learner):
    link_school_account(learner)

    response = edit(staff_client, learner, email="someone.else@school.example")

    assert response.status_code == 302
    learner.refresh_from_db()
    assert learner.email == "someone.else@school.example"
    assert not SocialAccount.objects.filter(user=learner.user).exists()
    event = AuditEvent.objects.get(action=AuditEvent.Action.LEARNER_CHANGED)
    assert "email" in event.detail["fields"]
    assert event.detail["school_identity_unlinked"] is True


@pytest.mark.parametrize("email", ["lee@school.example", "Lee@School.example"])
def test_a_save_that_keeps_the_email_keeps_the_school_account(staff_client, learner, email):
    link_school_account(learner)

    response = edit(staff_client, learner, email=email)

    assert response.status_code == 302
    learner.refresh_from_db()
    assert learner.first_name == "Leigh"
    assert SocialAccount.objects.filter(user=learner.user).count() == 1
    event = AuditEvent.objects.get(action=AuditEvent.Action.LEARNER_CHANGED)
    assert "school_identity_unlinked" not in event.detail


def test_saving_without_a_change_says_so_and_records_nothing(staff_client, learner):
    unchanged = {
        "first_name": "Lee",
        "last_name": "Pupil",
        "email": "",
        "dob": "2010-05-17",
        "level": Level.SECONDARY,
    }

    response = edit(staff_client, learner, **unchanged)

    assert response.status_code == 200
    assert "Nothing was changed" in response.content.decode()
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.LEARNER_CHANGED).exists()


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"dob": (date.today() + timedelta(days=1)).isoformat()}, "dob", "must be in the past"),
        ({"dob": "27/03/2009"}, "dob", "real date"),
        ({"dob": "1800-01-01"}, "dob", "would be over 100 years old"),
        ({"dob": (date.today() - timedelta(days=50)).isoformat()}, "dob", "under 4 years old"),
        ({"dob": ""}, "dob", "Enter the date of birth."),
        ({"email": "not-an-email"}, "email", "valid email"),
        ({"level": "LOA_PARTNER_LEVEL9"}, "level", "Select a valid choice"),
    ],
)
def test_it_checks_the_details_as_registration_does(staff_client, learner, changes, field, message):
    response = edit(staff_client, learner, **changes)

    assert response.status_code == 200
    assert any(message in error for error in response.context["form"].errors[field])
    html = response.content.decode()
    # A date's error leads to its first box; other fields' to the field.
    target = "id_dob_day" if field == "dob" else f"id_{field}"
    assert "There is a problem" in html and f'href="#{target}"' in html
    learner.refresh_from_db()
    assert learner.first_name == "Lee" and learner.dob == date(2010, 5, 17)
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.LEARNER_CHANGED).exists()


def test_a_new_level_counts_the_learners_results_under_it_on_the_dashboard(staff_client, learner):
    completed(learner, "2026-09-10", risk="HIGH")
    assert list(CohortResult.objects.values_list("level", flat=True)) == [Level.SECONDARY]

    edit(staff_client, learner, level=Level.PRIMARY)

    assert list(CohortResult.objects.values_list("level", flat=True)) == [Level.PRIMARY]


def test_an_erased_learner_cannot_be_edited(staff_client, staff, learner):
    learner_erase(learner=learner, erased_by=staff)

    assert staff_client.get(f"/learners/{learner.pk}/edit/").status_code == 404
    assert edit(staff_client, learner).status_code == 404
    learner.refresh_from_db()
    assert learner.first_name == "" and learner.dob is None


def test_a_learner_erased_while_the_form_was_open_is_not_written_to(
    staff_client, staff, learner, monkeypatch
):
    from learners import views

    def erase_first(**kwargs):
        learner_erase(learner=kwargs["learner"], erased_by=staff)
        return real(**kwargs)

    real = views.learner_details_change
    monkeypatch.setattr(views, "learner_details_change", erase_first)

    assert edit(staff_client, learner).status_code == 404
    learner.refresh_from_db()
    assert learner.status == Learner.Status.ERASED and learner.first_name == ""


def test_only_staff_who_see_the_learner_may_edit_them(learner, other_learner):
    group = make_group("10A")
    put_in_group(group, learner)
    teacher = make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[group])
    client = Client()
    client.force_login(teacher)

    assert client.get(f"/learners/{learner.pk}/edit/").status_code == 200
    assert client.get(f"/learners/{other_learner.pk}/edit/").status_code == 404
    assert edit(client, other_learner).status_code == 404
    other_learner.refresh_from_db()
    assert other_learner.first_name == "Olive"
    client.force_login(learner.user)
    assert client.get(f"/learners/{learner.pk}/edit/").status_code == 404


def test_a_teacher_corrects_names_but_not_the_date_of_birth_or_level(learner):
    group = make_group("10A")
    put_in_group(group, learner)
    teacher = make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[group])
    client = Client()
    client.force_login(teacher)

    form = client.get(f"/learners/{learner.pk}/edit/").content.decode()
    assert re.search(r'name="dob_year"[^>]*disabled', form)
    assert re.search(r'<select name="level"[^>]*disabled', form)
    assert "Only staff who see the whole school can change this" in form

    # A date of birth or level posted anyway (a tampered form) is ignored; the names are saved.
    response = edit(client, learner)

    assert response.status_code == 302
    learner.refresh_from_db()
    assert (learner.first_name, learner.email) == ("Leigh", "leigh@example.org")
    assert learner.dob == date(2010, 5, 17) and learner.level == Level.SECONDARY
    detail = AuditEvent.objects.get(action=AuditEvent.Action.LEARNER_CHANGED).detail
    assert "dob" not in detail["fields"] and "level" not in detail["fields"]


def test_the_service_refuses_a_teachers_change_of_age_or_level(learner):
    teacher = make_staff("tara.teacher", role=StaffRole.TEACHER)

    with pytest.raises(PermissionDenied):
        learner_details_change(
            learner=learner,
            changed_by=teacher,
            address=None,
            first_name=learner.first_name,
            last_name=learner.last_name,
            email=learner.email,
            dob=date(2000, 1, 1),
            level=learner.level,
        )

    learner.refresh_from_db()
    assert learner.dob == date(2010, 5, 17)
