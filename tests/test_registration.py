"""Staff register learners: field errors, upstream refusals, nothing half-created."""

from datetime import date, timedelta

import pytest
import requests
import responses
from django.contrib.auth.models import User

from learners.models import Learner
from tests.factories import PASSWORD, VALID, make_learner
from tests.journeys import register_pupil

CREATE_URL = "http://127.0.0.1:8001/plapi/v1/partners/users/create-learner"


def register(client, **changes):
    return client.post("/learners/new/", {**VALID, **changes})


def test_the_form_shows_every_spec_field_with_a_label(staff_client):
    html = staff_client.get("/learners/new/").content.decode()
    for name in ["username", "password", "email", "first_name", "last_name", "level"]:
        assert f'name="{name}"' in html
        assert f'<label for="id_{name}">' in html
    # The date of birth is typed as day, month and year, each box labelled, under its legend.
    assert "<legend>Date of birth</legend>" in html
    for part in ["day", "month", "year"]:
        assert f'name="dob_{part}"' in html
        assert f'<label for="id_dob_{part}">{part.title()}</label>' in html


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"dob": (date.today() + timedelta(days=1)).isoformat()}, "dob", "must be in the past"),
        ({"dob": "27/03/2009"}, "dob", "real date"),
        ({"dob": "1800-01-01"}, "dob", "would be over 100 years old"),
        (
            {"dob": (date.today() - timedelta(days=50)).isoformat()},
            "dob",
            "would be under 4 years old",
        ),
        ({"password": "short7"}, "password", "too short"),
        ({"password": "12345678901"}, "password", "entirely numeric"),
        ({"username": ""}, "username", "Enter the username."),
        ({"username": "no spaces please"}, "username", "Enter a valid username"),
        ({"email": "not-an-email"}, "email", "valid email"),
        ({"level": "LOA_PARTNER_LEVEL9"}, "level", "Select a valid choice"),
    ],
)
def test_it_rejects_bad_input_with_a_field_error_and_sends_nothing(
    staff_client, changes, field, message
):
    with responses.RequestsMock() as upstream:  # any upstream call would fail the test
        response = register(staff_client, **changes)
        assert len(upstream.calls) == 0
    assert response.status_code == 200
    form = response.context["form"]
    assert any(message in error for error in form.errors[field])
    html = response.content.decode()
    assert "There is a problem" in html
    # A date's error leads to its first box.
    target = f"id_{field}_day" if field == "dob" else f"id_{field}"
    assert f'href="#{target}"' in html
    assert not Learner.objects.exists()


def test_it_keeps_what_was_typed_except_the_password(staff_client):
    response = register(staff_client, dob="2999-01-01")
    html = response.content.decode()
    assert 'value="nina.new"' in html and 'value="nina@example.org"' in html
    assert VALID["password"] not in html


def test_it_refuses_a_username_already_registered_here(staff_client, learner):
    with responses.RequestsMock():
        response = register(staff_client, username=learner.username.upper())
    assert "already taken" in response.context["form"].errors["username"][0]


def test_it_registers_the_learner_upstream_and_locally(staff_client, staff, upstream):
    response = register(staff_client)
    learner = Learner.objects.get(username="nina.new")
    assert response.url == f"/learners/{learner.pk}/"
    assert learner.upstream_user_id and learner.status == Learner.Status.ACTIVE
    assert learner.registered_by == staff
    assert learner.dob == date(2009, 3, 27) and learner.level == "LOA_PARTNER_LEVEL2"
    # The password is Django-hashed locally and never kept in plain text.
    assert learner.user.is_active and learner.user.check_password(VALID["password"])
    assert VALID["password"] not in learner.user.password
    page = staff_client.get(response.url).content.decode()
    assert "Nina New is registered and can sign in with the username nina.new" in page


def test_it_shows_the_upstreams_message_when_the_username_is_taken_there(staff_client, upstream):
    requests.post(
        f"{upstream.base_url}/users/create-learner",
        json={"username": "nina.new", "password": "Another-Pass-99", "dob": "2010-01-01"},
        headers={"apikey": "sandbox-demo-key"},
        timeout=5,
    )
    response = register(staff_client)
    errors = response.context["form"].errors["username"]
    assert "refused" in errors[0] and "taken" in errors[0].lower()
    assert not Learner.objects.exists()
    assert not User.objects.filter(username="nina.new").exists()


def test_a_registration_the_service_turns_away_says_so_and_can_be_sent_again_as_it_is(
    staff_client, upstream
):
    upstream.state.faults.add("create-learner", "503", times=1, retry_after=0)

    response = register(staff_client)

    [said] = response.context["form"].non_field_errors()
    assert "The assessment service was unavailable" in said
    assert "the learner is not registered" in said and "nothing was kept in the portal" in said
    assert "Try again in a few minutes with the same details." in said
    assert "choose another" not in said.lower() and "may have registered" not in said
    assert not Learner.objects.exists() and not User.objects.filter(username="nina.new").exists()
    with upstream.state.lock:
        assert not upstream.state.learners
    # Sent again as it is, the same details register the learner.
    again = register(staff_client)
    assert again.url == f"/learners/{Learner.objects.get(username='nina.new').pk}/"


@responses.activate
@pytest.mark.parametrize(
    ("upstream_reply", "shown"),
    [
        ({"body": requests.exceptions.ConnectionError("refused")}, "could not be reached"),
        ({"body": requests.exceptions.ReadTimeout("slow")}, "did not answer in time"),
        ({"status": 500, "json": {"error": "boom"}}, "internal error"),
        ({"status": 200, "body": "<html>not json</html>"}, "could not read"),
        ({"status": 200, "json": {"message": "created"}}, "could not read"),
        ({"status": 400, "json": {"detail": "dob is odd"}}, "dob is odd"),
    ],
)
def test_an_upstream_failure_leaves_nothing_half_created(staff_client, upstream_reply, shown):
    responses.add(responses.POST, CREATE_URL, **upstream_reply)
    response = register(staff_client)
    assert response.status_code == 200
    assert shown in response.content.decode()
    assert not Learner.objects.exists()
    assert not User.objects.filter(username="nina.new").exists()


def test_the_learner_list_searches_and_paginates(staff_client, learner, other_learner):
    html = staff_client.get("/learners/?q=olive").content.decode()
    assert "olive.other" in html and "lee.learner" not in html
    html = staff_client.get("/learners/").content.decode()
    assert "2 learners" in html


def test_the_learner_list_filters_by_level(staff_client, learner, other_learner):
    other_learner.level = "LOA_PARTNER_LEVEL3"
    other_learner.save()
    html = staff_client.get("/learners/?level=LOA_PARTNER_LEVEL3").content.decode()
    assert "olive.other" in html and "lee.learner" not in html


def test_the_learner_list_pages_by_25(staff_client, db):
    for number in range(30):
        make_learner(f"pupil{number:02d}.x", f"u-{number}")
    first = staff_client.get("/learners/").content.decode()
    second = staff_client.get("/learners/?page=2").content.decode()
    assert "30 learners" in first and "Page 1 of 2" in first
    assert first.count("/learners/") > 25 and "Page 2 of 2" in second


def test_an_empty_list_invites_the_first_registration(staff_client):
    assert "Register the first one" in staff_client.get("/learners/").content.decode()


def test_the_learner_list_finds_a_full_name(staff_client, learner, other_learner):
    html = staff_client.get("/learners/?q=Olive+Pupil").content.decode()
    assert "olive.other" in html and "lee.learner" not in html


def test_a_learner_signs_in_whatever_the_case_of_their_username(client, learner):
    response = client.post("/accounts/login/", {"username": "LEE.Learner", "password": PASSWORD})
    assert response.status_code == 302
    assert client.get("/").url == "/me/"


def test_a_registration_cut_off_long_ago_does_not_block_the_username(staff_client, upstream):
    from datetime import timedelta

    from django.utils import timezone

    from learners.selectors import PENDING_REGISTRATION_STALE_AFTER

    stuck_user = User.objects.create_user("nina.new", is_active=False)
    stuck = Learner.objects.create(
        user=stuck_user, username="nina.new", dob=date(2009, 3, 27), status=Learner.Status.PENDING
    )
    Learner.objects.filter(pk=stuck.pk).update(
        registered_at=timezone.now() - PENDING_REGISTRATION_STALE_AFTER - timedelta(minutes=1)
    )

    response = register(staff_client)

    learner = Learner.objects.get(username="nina.new")
    assert response.url == f"/learners/{learner.pk}/"
    assert learner.is_registered and learner.pk != stuck.pk


def test_a_learner_id_the_portal_cannot_use_leaves_nothing_behind(staff_client):
    with responses.RequestsMock() as upstream:
        upstream.post(CREATE_URL, json={"user_id": " spaced ", "message": "ok"})
        response = register(staff_client)
    assert "could not read" in response.content.decode()
    assert not Learner.objects.exists() and not User.objects.filter(username="nina.new").exists()


@pytest.mark.django_db
def test_the_service_hands_back_the_learner_as_it_was_stored(staff, upstream):
    learner = register_pupil(staff)

    stored = Learner.objects.select_related("user").get(pk=learner.pk)
    assert stored.status == Learner.Status.ACTIVE and stored.user.is_active
    assert (learner.status, learner.upstream_user_id, learner.user.is_active) == (
        stored.status,
        stored.upstream_user_id,
        stored.user.is_active,
    )
