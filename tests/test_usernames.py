"""One normal form for usernames: registration, bulk registration and sign-in agree on it."""

import pytest
import responses
from django.contrib.auth.models import User
from django.test import Client

from accounts.usernames import username_normal_form, username_problem
from imports.models import ImportRow
from imports.services import import_job_create_from_csv
from learners.models import Learner
from tests.factories import GOOD_PASSWORD, HEADER, PASSWORD, VALID, make_learner, upload_file

LOGIN = "/accounts/login/"
MIXED = "Use letters from one alphabet only: this username mixes Latin and Cyrillic letters"
CYRILLIC_ALICE = "\u0430lice"  # the first letter is Cyrillic

# Neither database folds case or width as the normal form does: looked up on both.
pytestmark = pytest.mark.backend


def register(client: Client, username: str):
    return client.post("/learners/new/", {**VALID, "username": username})


def sign_in(username: str, password: str = PASSWORD) -> Client:
    """Sign in through the form in a fresh browser; return it (signed in or not)."""
    browser = Client()
    browser.post(LOGIN, {"username": username, "password": password})
    return browser


def signed_in_as(browser: Client) -> User | None:
    user_id = browser.session.get("_auth_user_id")
    return User.objects.get(pk=user_id) if user_id else None


def checked_rows(staff, *usernames: str) -> dict[str, ImportRow]:
    """Check a file with one row per username; return its rows by the username as written."""
    lines = [f"{name},{GOOD_PASSWORD},2010-01-02,,,," for name in usernames]
    job = import_job_create_from_csv(
        file=upload_file(HEADER + "\n" + "\n".join(lines) + "\n"), created_by=staff
    )
    rows = job.rows.order_by("row_number")
    return dict(zip(usernames, rows, strict=True))


# The normal form.


@pytest.mark.parametrize(
    ("typed", "normal"),
    [
        ("\uff4a\uff4f\uff48\uff4e", "john"),  # full-width letters
        ("  \u00c9MILE\u3000", "\u00e9mile"),  # capitals, and a full-width space after
        ("E\u0301mile", "\u00e9mile"),  # an accent typed as a combining mark
        ("Stra\u00dfe", "strasse"),
        ("\u2160.pupil", "i.pupil"),  # the Roman numeral one
    ],
    ids=["full-width", "capitals and spaces", "combining accent", "sharp s", "numeral"],
)
def test_look_alike_spellings_of_a_username_have_one_normal_form(typed, normal):
    assert username_normal_form(typed) == normal


@pytest.mark.parametrize(
    "username",
    ["alice", "\u0430\u043b\u0438\u0441\u0430", "\u03b1\u03bb\u03b9\u03ba\u03b7", "7b.pupil-2"],
)
def test_a_username_in_one_alphabet_is_accepted(username):
    assert username_problem(username) is None


def test_a_username_mixing_look_alike_alphabets_is_refused_with_both_named():
    assert username_problem(CYRILLIC_ALICE).startswith(MIXED)
    assert "Latin and Greek" in username_problem("\u03b1lice")


# Registration and sign-in.


def test_a_full_width_username_registers_in_normal_form_and_signs_in_however_written(
    staff_client, upstream
):
    response = register(staff_client, "\uff4a\uff4f\uff48\uff4e")

    learner = Learner.objects.get()
    assert response.url == f"/learners/{learner.pk}/"
    assert (learner.username, learner.user.username) == ("john", "john")
    assert [sent.username for sent in upstream.state.learners.values()] == ["john"]
    for written in ("JOHN", "\uff4a\uff4f\uff48\uff4e", " John "):
        assert signed_in_as(sign_in(written, VALID["password"])) == learner.user, written


@pytest.mark.no_dsl  # it counts the accounts
def test_a_full_width_name_opens_the_account_of_its_normal_form_only_with_its_password(db):
    alice = make_learner("alice", "u-alice")
    full_width = "\uff41\uff4c\uff49\uff43\uff45"

    assert signed_in_as(sign_in(full_width, "not-alices-password")) is None
    assert signed_in_as(sign_in(full_width)) == alice.user
    assert User.objects.count() == 1


def test_accounts_left_colliding_by_the_migration_each_sign_in_as_written(db):
    # Made before usernames had a normal form; learners migration 0008 leaves both as they are.
    upper = User.objects.create_user("Alice", password=PASSWORD)
    lower = User.objects.create_user("alice", password=PASSWORD)

    assert signed_in_as(sign_in("Alice")) == upper
    assert signed_in_as(sign_in("alice")) == lower
    assert signed_in_as(sign_in("ALICE")) == lower


def test_a_full_width_name_cannot_be_registered_beside_the_account_it_looks_like(staff_client):
    make_learner("alice", "u-alice")

    with responses.RequestsMock():  # nothing may reach the upstream
        response = register(staff_client, "\uff41\uff4c\uff49\uff43\uff45")

    assert "already taken" in response.context["form"].errors["username"][0]


def test_a_name_mixing_cyrillic_and_latin_is_refused_on_the_form(staff_client):
    make_learner("alice", "u-alice")

    with responses.RequestsMock():
        response = register(staff_client, CYRILLIC_ALICE)

    assert response.status_code == 200
    assert response.context["form"].errors["username"][0].startswith(MIXED)
    assert MIXED in response.content.decode()
    assert Learner.objects.count() == 1


def test_an_accented_name_in_capitals_is_taken_by_the_same_name_in_lower_case(
    staff_client, upstream
):
    assert register(staff_client, "\u00e9mile").status_code == 302

    response = register(staff_client, "\u00c9MILE")

    assert "already taken" in response.context["form"].errors["username"][0]
    assert Learner.objects.get().username == "\u00e9mile"


def test_a_name_that_grows_past_150_characters_in_normal_form_is_refused(staff_client):
    # Each ligature is one character typed and two in normal form.
    response = register(staff_client, "\ufb01" * 100)

    assert (
        "Use at most 150 characters: this username has 200."
        in (response.context["form"].errors["username"][0])
    )


# Bulk registration.


def test_a_file_row_mixing_alphabets_is_refused_with_the_same_message(staff):
    rows = checked_rows(staff, CYRILLIC_ALICE, "bob")

    assert rows[CYRILLIC_ALICE].state == ImportRow.State.INVALID
    assert rows[CYRILLIC_ALICE].problems[0].startswith(f"username: {MIXED}")
    assert rows["bob"].state == ImportRow.State.QUEUED


def test_a_file_row_is_kept_in_normal_form_and_checked_against_every_spelling(staff):
    make_learner("\u00e9mile", "u-emile")

    rows = checked_rows(staff, "\u00c9MILE", "\uff4a\uff4f\uff48\uff4e", "John")

    assert rows["\u00c9MILE"].problems == [
        "username: \u00c9MILE is already registered in the portal."
    ]
    assert rows["\uff4a\uff4f\uff48\uff4e"].state == ImportRow.State.QUEUED
    assert rows["\uff4a\uff4f\uff48\uff4e"].username == "john"
    assert "appears more than once in the file (first at row 3)" in rows["John"].problems[0]
