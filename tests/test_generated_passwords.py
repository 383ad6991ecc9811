"""Passwords the portal makes on the registration form and the new-password page: shown once."""

import logging
import re

import pytest
from django.contrib.auth.password_validation import validate_password
from django.contrib.sessions.models import Session
from django.test import Client

from audit.models import AuditEvent
from learners.models import Learner
from learners.passwords import PASSWORD_ALPHABET, password_generate
from tests.factories import PASSWORD, VALID
from tests.journeys import page_showing
from tests.log_capture import console_output

LOOK_ALIKES = set("0O1lIio")
MADE = re.compile(r'<p class="password-made-value"><code>([^<]+)</code></p>')


def made_password_on(page: str) -> str | None:
    """Return the password the learner's record shows as just made, if it shows one."""
    found = MADE.search(page)
    return found.group(1) if found else None


def signs_in(username: str, password: str) -> bool:
    """Sign in through the sign-in form, as the learner would, in a browser of their own."""
    response = Client().post("/accounts/login/", {"username": username, "password": password})
    return response.status_code == 302 and response.url == "/"


def register_with_a_made_password(client: Client):
    form = {**VALID, "password": "", "make_password": "on"}
    return client.post("/learners/new/", form)


@pytest.mark.django_db
def test_a_made_password_lets_the_learner_sign_in_and_is_shown_only_once(
    staff_client, upstream, caplog
):
    caplog.set_level(logging.DEBUG)
    with console_output() as console:
        response = register_with_a_made_password(staff_client)
        learner = Learner.objects.get(username="nina.new")
        assert response.url == f"/learners/{learner.pk}/"
        page = staff_client.get(response.url).content.decode()

    password = made_password_on(page)
    assert password and "Nina New is registered" in page and "the password below" in page
    assert "shown only this once" in page
    assert signs_in("nina.new", password)
    # Gone on reload, and never in an address, a log, the session or the audit trail.
    reloaded = page_showing(staff_client, response.url, "<h1>Nina New</h1>")
    assert made_password_on(reloaded) is None
    assert password not in response.url
    assert password not in caplog.text and password not in console.text
    sessions = [session.get_decoded() for session in Session.objects.all()]
    assert password not in str(sessions) and password not in str(
        list(AuditEvent.objects.values_list("detail", flat=True))
    )
    assert password not in learner.user.password


@pytest.mark.django_db
def test_the_made_password_is_also_spelled_out_in_its_groups(staff_client, upstream):
    response = register_with_a_made_password(staff_client)

    page = staff_client.get(response.url).content.decode()

    password = made_password_on(page)
    groups = re.findall(r'<span class="password-made-group">([^<]+)</span>', page)
    assert groups == [" ".join(group) for group in password.split("-")]


@pytest.mark.django_db
def test_a_made_password_waits_for_its_own_learners_record(staff_client, upstream, learner):
    response = register_with_a_made_password(staff_client)

    # Another learner's record, opened first in another tab, does not show it.
    other = page_showing(
        staff_client, f"/learners/{learner.pk}/", f"<h1>{learner.display_name}</h1>"
    )
    assert made_password_on(other) is None
    assert made_password_on(staff_client.get(response.url).content.decode())


def test_made_passwords_have_no_look_alike_characters_and_pass_the_validators(db):
    for _ in range(200):
        password = password_generate(username="nina.new", first_name="Nina", last_name="New")
        assert re.fullmatch(r"[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}", password)
        assert not LOOK_ALIKES & set(password)
        assert set(password) - {"-"} <= set(PASSWORD_ALPHABET)
        validate_password(password)


def test_the_password_is_typed_or_made_not_both_and_not_neither(staff_client):
    both = staff_client.post("/learners/new/", {**VALID, "make_password": "on"})
    neither = staff_client.post("/learners/new/", {**VALID, "password": ""})

    assert "not both" in both.context["form"].errors["password"][0]
    assert neither.context["form"].errors["password"] == [
        'Enter the password. To have one made, tick "Make a password for me".'
    ]
    assert not Learner.objects.exists()


def test_the_form_offers_to_make_a_password_with_a_label(staff_client, learner):
    for path in ("/learners/new/", f"/learners/{learner.pk}/password/"):
        html = staff_client.get(path).content.decode()
        assert 'type="checkbox" name="make_password"' in html
        assert '<label for="id_make_password">Make a password for me</label>' in html


@pytest.mark.django_db
def test_a_registration_that_fails_shows_no_password_and_keeps_the_choice(staff_client, upstream):
    upstream.state.faults.add("create-learner", "503", times=1, retry_after=0)

    response = register_with_a_made_password(staff_client)

    html = response.content.decode()
    assert response.status_code == 200 and "turned the registration away" in html
    assert re.search(r'<input type="checkbox" name="make_password"[^>]* checked>', html)
    assert 'class="password-made' not in html
    assert not Learner.objects.exists()


def test_a_new_password_made_for_a_learner_replaces_the_old_one_and_is_shown_once(
    staff_client, learner
):
    response = staff_client.post(f"/learners/{learner.pk}/password/", {"make_password": "on"})

    assert response.url == f"/learners/{learner.pk}/"
    page = staff_client.get(response.url).content.decode()
    password = made_password_on(page)
    assert password and "is reset" in page
    assert signs_in(learner.username, password)
    assert not signs_in(learner.username, PASSWORD)
    reloaded = page_showing(staff_client, response.url, f"<h1>{learner.display_name}</h1>")
    assert made_password_on(reloaded) is None
    assert AuditEvent.objects.get(action=AuditEvent.Action.PASSWORD_RESET).detail == {}


@pytest.mark.django_db
def test_passwords_made_for_two_learners_in_two_tabs_are_both_shown(
    staff_client, upstream, learner
):
    # Tab 1 resets one learner's password; tab 2 registers another; then each record opens.
    staff_client.post(f"/learners/{learner.pk}/password/", {"make_password": "on"})
    registered = register_with_a_made_password(staff_client)

    reset = made_password_on(staff_client.get(f"/learners/{learner.pk}/").content.decode())
    made = made_password_on(staff_client.get(registered.url).content.decode())

    assert reset and made and reset != made
    assert signs_in(learner.username, reset) and signs_in("nina.new", made)


def test_a_new_password_is_typed_twice_or_made_not_both(staff_client, learner):
    typed = {"new_password1": "Green-Window-Ledge-71", "new_password2": "Green-Window-Ledge-71"}

    both = staff_client.post(f"/learners/{learner.pk}/password/", {**typed, "make_password": "on"})
    neither = staff_client.post(f"/learners/{learner.pk}/password/", {})

    assert "not both" in both.context["form"].errors["new_password1"][0]
    assert neither.context["form"].errors["new_password1"] == [
        'Enter the new password. To have one made, tick "Make a password for me".'
    ]
    assert signs_in(learner.username, PASSWORD)
