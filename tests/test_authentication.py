"""Signing in and out: throttling, idle sessions, and password resets by staff."""

import logging
import re
import time
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts import auth
from accounts.idle import LAST_ACTIVITY_SESSION_KEY
from accounts.models import SignInLock
from audit.models import AuditEvent
from tests.factories import PASSWORD, make_learner

LOGIN = "/accounts/login/"
HOME = "192.0.2.10"  # the learner's classroom
ATTACKER = "203.0.113.66"
SECOND_ATTACKER = "198.51.100.7"
WRONG = "not-the-password"
NEW_PASSWORD = "Blue-Kettle-Morning-42"
TOO_MANY = "Too many attempts. Try again in 15 minutes."
INVALID = "Enter a correct username and password."
IDLE_MESSAGE = "You were signed out after 15 minutes without activity. Your answers are saved."


@pytest.fixture(autouse=True)
def fresh_throttle_counts():
    """Each test starts with no failed sign-ins counted (the counts live in the cache)."""
    cache.clear()
    yield
    cache.clear()


def sign_in(client: Client, username: str, password: str, *, ip: str = HOME):
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=ip)


def error_summary(response) -> str:
    """Return the text of the page's error summary, or "" when it has none."""
    match = re.search(r'<div class="error-summary".*?</div>', response.content.decode(), re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", match[0])).strip() if match else ""


def fail_times(client: Client, username: str, times: int, *, ip: str = HOME) -> list:
    return [sign_in(client, username, WRONG, ip=ip) for _ in range(times)]


# Throttling.


def test_a_username_is_locked_after_five_failures_even_for_the_right_password(client, learner):
    first_four = fail_times(client, "lee.learner", 4)
    fifth = sign_in(client, "lee.learner", WRONG)

    assert all(INVALID in error_summary(r) for r in first_four)
    assert TOO_MANY in error_summary(fifth)
    refused = sign_in(client, "lee.learner", PASSWORD)
    assert refused.status_code == 200
    assert TOO_MANY in error_summary(refused)
    assert client.get("/").url == LOGIN


def test_an_unknown_username_gets_the_same_answers_as_a_known_one(client, learner):
    known = [(r.status_code, error_summary(r)) for r in fail_times(client, "lee.learner", 6)]
    unknown = [(r.status_code, error_summary(r)) for r in fail_times(client, "no.such.user", 6)]

    assert known == unknown
    assert [summary for _status, summary in known] == [f"There is a problem {INVALID}"] * 4 + [
        f"There is a problem {TOO_MANY}"
    ] * 2
    assert {status for status, _summary in known} == {200}


def test_failures_from_one_address_leave_the_account_open_from_others(client, learner):
    fail_times(client, "lee.learner", 5, ip=ATTACKER)

    assert TOO_MANY in error_summary(sign_in(client, "lee.learner", PASSWORD, ip=ATTACKER))
    assert sign_in(Client(), "lee.learner", PASSWORD, ip=HOME).status_code == 302


def test_an_account_is_locked_from_every_address_after_ten_failures_in_any_case(learner):
    fail_times(Client(), "lee.learner", 5, ip=ATTACKER)
    fail_times(Client(), "LEE.Learner", 5, ip=SECOND_ATTACKER)

    response = sign_in(Client(), "Lee.Learner", PASSWORD, ip=HOME)

    assert TOO_MANY in error_summary(response)


def test_a_lock_on_one_username_leaves_others_free(client, learner, other_learner):
    fail_times(client, "lee.learner", 5)

    response = sign_in(client, "olive.other", PASSWORD)

    assert response.status_code == 302
    assert client.get("/").url == "/me/"


def test_an_address_is_locked_after_a_hundred_failures_whatever_the_usernames(learner):
    attacker = Client()
    for number in range(99):
        assert INVALID in error_summary(sign_in(attacker, f"guess{number}", WRONG, ip=ATTACKER))
    assert TOO_MANY in error_summary(sign_in(attacker, "guess99", WRONG, ip=ATTACKER))

    # Even a right password from that address is refused, but the learner elsewhere is not.
    assert TOO_MANY in error_summary(sign_in(attacker, "lee.learner", PASSWORD, ip=ATTACKER))
    assert sign_in(Client(), "lee.learner", PASSWORD, ip=HOME).status_code == 302


def test_correct_sign_ins_never_use_up_their_address(db):
    for number in range(120):
        make_learner(f"pupil{number}", f"u-{number}")

    signed_in = [sign_in(Client(), f"pupil{n}", PASSWORD).status_code for n in range(120)]

    assert signed_in == [302] * 120


@pytest.mark.backend  # SQLite once failed on it
def test_a_100000_character_username_is_a_form_error_counted_towards_the_lock(client, db):
    endless = "lee.learner" * 10_000

    with CaptureQueriesContext(connection) as queries:
        first_four = fail_times(client, endless, 4)
    fifth = sign_in(client, endless, WRONG)

    # Never sent to the database: no account is looked up at all.
    assert not [query for query in queries if "auth_user" in query["sql"]]
    assert {r.status_code for r in first_four} == {200}
    assert all(
        "A username has at most 150 characters: check what is in the username box."
        in error_summary(r)
        for r in first_four
    )
    assert TOO_MANY in error_summary(fifth)


def test_a_username_typed_long_counts_for_its_address_too(client, learner, settings):
    settings.LOGIN_FAILURE_LIMIT_PER_IP = 3
    fail_times(client, "x" * 151, 2, ip=ATTACKER)
    sign_in(client, "y" * 5000, WRONG, ip=ATTACKER)

    assert TOO_MANY in error_summary(sign_in(client, "lee.learner", PASSWORD, ip=ATTACKER))


def test_an_absurdly_long_password_is_a_form_error_and_a_failure(client, learner, settings):
    settings.LOGIN_FAILURE_LIMIT_PER_USERNAME = 2
    response = sign_in(client, "lee.learner", "p" * 5000)

    assert "A password has at most 4096 characters." in error_summary(response)
    sign_in(client, "lee.learner", "p" * 5000)
    assert TOO_MANY in error_summary(sign_in(client, "lee.learner", PASSWORD))


def test_locks_on_a_learner_and_on_an_address_are_recorded_for_staff(client, learner):
    fail_times(client, "lee.learner", 5, ip=HOME)
    fail_times(client, "LEE.LEARNER", 5, ip=ATTACKER)
    for number in range(100):
        sign_in(client, f"guess{number}", WRONG, ip=SECOND_ATTACKER)

    locks = SignInLock.objects.current().order_by("kind", "address")
    assert [(lock.kind, lock.user, lock.address) for lock in locks] == [
        ("account", learner.user, None),
        ("account_address", learner.user, HOME),
        ("account_address", learner.user, ATTACKER),
        ("address", None, SECOND_ATTACKER),
    ]
    assert all(lock.locked_until > timezone.now() + timedelta(minutes=14) for lock in locks)


def test_a_lock_on_a_username_no_account_has_leaves_no_record(client, db):
    fail_times(client, "no.such.user", 10)

    assert TOO_MANY in error_summary(sign_in(client, "no.such.user", WRONG))
    assert not SignInLock.objects.exists()


def test_sign_ins_the_portal_failed_to_check_count_against_no_one(learner, settings, monkeypatch):
    settings.LOGIN_FAILURE_LIMIT_PER_IP = 3

    def database_down(username):
        raise DatabaseError("the database is down")

    with monkeypatch.context() as outage:
        outage.setattr(auth, "account_for", database_down)
        for _ in range(5):
            failed = sign_in(Client(raise_request_exception=False), "lee.learner", PASSWORD)
            assert failed.status_code == 500

    assert sign_in(Client(), "lee.learner", PASSWORD).status_code == 302


def test_a_successful_sign_in_resets_the_usernames_count(client, learner):
    fail_times(client, "lee.learner", 4)
    assert sign_in(client, "lee.learner", PASSWORD).status_code == 302
    client.post("/accounts/logout/")

    fail_times(client, "lee.learner", 4)

    assert sign_in(client, "lee.learner", PASSWORD).status_code == 302


def test_a_lock_ends_after_the_lockout(client, learner, settings):
    settings.LOGIN_LOCKOUT_DURATION = 1
    fail_times(client, "lee.learner", 5)
    assert "Try again in 1 minute." in error_summary(sign_in(client, "lee.learner", PASSWORD))

    time.sleep(1.1)

    assert sign_in(client, "lee.learner", PASSWORD).status_code == 302


def test_the_admin_has_no_sign_in_of_its_own_only_the_portals_throttled_one(client, superuser):
    # Its own form would sign in with a password alone: no throttle, no second factor.
    response = client.post("/admin/login/", {"username": "root.admin", "password": PASSWORD})

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=%2Fadmin%2Flogin%2F"
    assert "_auth_user_id" not in client.session
    for _ in range(5):
        client.post("/accounts/login/", {"username": "root.admin", "password": WRONG})
    locked = client.post(
        "/accounts/login/?next=/admin/", {"username": "root.admin", "password": PASSWORD}
    )
    assert locked.status_code == 200
    assert "Too many attempts" in locked.content.decode()
    assert client.get("/admin/").status_code == 302


def test_throttling_is_logged_without_the_username_or_any_password(client, learner, caplog):
    typo = "correct-horse-battery-in-the-username-box"
    with caplog.at_level(logging.INFO):
        fail_times(client, typo, 5, ip=ATTACKER)
        fail_times(client, "lee.learner", 5, ip=ATTACKER)
        sign_in(client, "lee.learner", PASSWORD, ip=ATTACKER)

    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "Sign-in locked for username" in logged and ATTACKER in logged
    assert "Sign-in refused while locked" in logged
    for secret in (typo, "lee.learner", WRONG, PASSWORD):
        assert secret not in logged


# Passwords: Django's validators, at least 8 characters as the upstream requires.


@pytest.mark.parametrize("password", ["Ab1-xyz", "password", "83920174659", "lee.learner"], ids=str)
def test_the_validators_refuse_short_common_numeric_and_look_alike_passwords(learner, password):
    with pytest.raises(ValidationError):
        validate_password(password, user=learner.user)


def test_the_validators_accept_a_password_of_eight_characters(learner):
    validate_password("Kx7-mq2z", user=learner.user)


def test_a_session_signed_in_before_the_backend_moved_stays_signed_in(client, learner):
    """Sessions name their backend by path; the old path (portal.auth) still reads the user."""
    sign_in(client, "lee.learner", PASSWORD)
    session = client.session
    assert session["_auth_user_backend"] == "accounts.auth.CaseInsensitiveModelBackend"
    session["_auth_user_backend"] = "portal.auth.CaseInsensitiveModelBackend"
    session.save()

    response = client.get("/me/")

    assert response.status_code == 200
    assert response.wsgi_request.user == learner.user


def test_the_old_backend_path_signs_no_one_in_and_counts_a_failure_once(client, learner):
    """A wrong password is checked by one backend only: five failures still lock, not three."""
    for _ in range(4):
        sign_in(client, "lee.learner", "wrong-password")
    response = sign_in(client, "lee.learner", PASSWORD)

    assert response.status_code == 302  # four failures: the account is still open
    assert response.wsgi_request.user == learner.user


# Idle sessions.


def test_a_learners_session_ends_with_the_browser(client, learner):
    response = sign_in(client, "lee.learner", PASSWORD)

    cookie = response.cookies["sessionid"]
    assert cookie["max-age"] == "" and cookie["expires"] == ""
    assert client.session.get_expire_at_browser_close()
    assert client.session[LAST_ACTIVITY_SESSION_KEY] == pytest.approx(time.time(), abs=5)


def test_staff_keep_their_session_for_eight_idle_hours(client, staff):
    response = sign_in(client, "sam.staff", PASSWORD)

    assert response.cookies["sessionid"]["max-age"] == 8 * 60 * 60
    assert client.session.get_expiry_age() == 8 * 60 * 60


def go_quiet(client: Client, seconds: int) -> None:
    """Make the client's last request look `seconds` older than it was."""
    session = client.session
    session[LAST_ACTIVITY_SESSION_KEY] -= seconds
    session.save()


def test_a_learner_quiet_for_fifteen_minutes_is_signed_out_and_told_why(client, learner):
    sign_in(client, "lee.learner", PASSWORD)
    assert client.get("/me/").status_code == 200

    go_quiet(client, 15 * 60 + 1)
    response = client.get("/me/")

    assert response.status_code == 302
    assert response.url == f"{LOGIN}?next=/me/"
    page = client.get(response.url).content.decode()
    assert "<h1>Sign in</h1>" in page and IDLE_MESSAGE in page
    assert client.get("/me/").status_code == 302


def test_a_learner_active_within_fifteen_minutes_stays_signed_in(client, learner):
    sign_in(client, "lee.learner", PASSWORD)

    for _ in range(3):
        go_quiet(client, 14 * 60)
        assert client.get("/me/").status_code == 200


def test_the_idle_timeout_for_learners_is_a_setting(client, learner, settings):
    settings.LEARNER_IDLE_TIMEOUT = 60
    sign_in(client, "lee.learner", PASSWORD)

    go_quiet(client, 61)
    client.get("/me/")

    assert "signed out after 1 minute without activity" in client.get(LOGIN).content.decode()


def test_staff_quiet_for_two_hours_stay_but_not_after_eight(client, staff):
    sign_in(client, "sam.staff", PASSWORD)

    go_quiet(client, 2 * 60 * 60)
    assert client.get("/learners/").status_code == 200

    go_quiet(client, 8 * 60 * 60 + 1)
    assert client.get("/learners/").url == f"{LOGIN}?next=/learners/"
    page = client.get(LOGIN).content.decode()
    assert "signed out after 8 hours without activity" in page
    assert "Your answers are saved" not in page


# Signing out.


def test_signing_out_takes_a_post_and_a_get_only_asks(learner_client):
    confirm = learner_client.get("/accounts/logout/")
    assert confirm.status_code == 200
    assert learner_client.get("/me/").status_code == 200

    learner_client.post("/accounts/logout/")

    assert learner_client.get("/me/").url == f"{LOGIN}?next=/me/"


# Password reset by staff.


def reset_path(learner) -> str:
    return f"/learners/{learner.pk}/password/"


def reset(client: Client, learner, password: str = NEW_PASSWORD, again: str | None = None):
    return client.post(
        reset_path(learner),
        {"new_password1": password, "new_password2": password if again is None else again},
        REMOTE_ADDR=HOME,
    )


def test_the_learner_record_links_to_the_reset(staff_client, learner):
    page = staff_client.get(f"/learners/{learner.pk}/").content.decode()

    assert f'href="{reset_path(learner)}"' in page


def test_staff_reset_a_learners_password_and_only_the_new_one_works(staff_client, learner):
    form = staff_client.get(reset_path(learner)).content.decode()
    assert 'name="new_password1"' in form and 'autocomplete="new-password"' in form

    response = reset(staff_client, learner)

    assert response.status_code == 302
    assert response.url == f"/learners/{learner.pk}/"
    assert "The password of Lee Pupil is reset." in staff_client.get(response.url).content.decode()
    assert INVALID in error_summary(sign_in(Client(), "lee.learner", PASSWORD))
    assert sign_in(Client(), "lee.learner", NEW_PASSWORD).status_code == 302


def test_a_reset_signs_the_learner_out_of_every_open_session(staff_client, learner):
    classroom, home = Client(), Client()
    for browser in (classroom, home):
        sign_in(browser, "lee.learner", PASSWORD)
        assert browser.get("/me/").status_code == 200

    reset(staff_client, learner)

    for browser in (classroom, home):
        assert browser.get("/me/").url == f"{LOGIN}?next=/me/"


def test_a_reset_is_audited_without_the_password(staff_client, staff, learner, caplog):
    with caplog.at_level(logging.DEBUG):
        reset(staff_client, learner)

    event = AuditEvent.objects.get(action=AuditEvent.Action.PASSWORD_RESET)
    assert (event.actor, event.learner, event.ip_address) == (staff, learner, HOME)
    stored = str(AuditEvent.objects.values().get(pk=event.pk))
    assert NEW_PASSWORD not in stored and "password" not in event.detail
    assert NEW_PASSWORD not in caplog.text


def test_a_reset_lifts_a_sign_in_lock_on_the_learner(staff_client, learner):
    fail_times(Client(), "lee.learner", 5)

    reset(staff_client, learner)

    assert sign_in(Client(), "lee.learner", NEW_PASSWORD).status_code == 302


def test_a_reset_lifts_the_learners_locks_from_every_address_but_not_the_addresses(
    staff_client, staff, learner
):
    fail_times(Client(), "lee.learner", 5, ip=HOME)
    fail_times(Client(), "lee.learner", 5, ip=SECOND_ATTACKER)
    for number in range(100):
        sign_in(Client(), f"guess{number}", WRONG, ip=ATTACKER)

    reset(staff_client, learner)

    assert sign_in(Client(), "lee.learner", NEW_PASSWORD, ip=HOME).status_code == 302
    assert sign_in(Client(), "lee.learner", NEW_PASSWORD, ip=SECOND_ATTACKER).status_code == 302
    assert TOO_MANY in error_summary(sign_in(Client(), "lee.learner", NEW_PASSWORD, ip=ATTACKER))
    # The records say so: the learner's locks lifted by the reset, the address's still on.
    assert {(lock.kind, lock.lifted_by) for lock in SignInLock.objects.all()} == {
        ("account", staff),
        ("account_address", staff),
        ("address", None),
    }


@pytest.mark.parametrize(
    ("password", "again", "error"),
    [
        ("Ab1-xyz", None, "too short"),
        ("password", None, "too common"),
        ("83920174659", None, "entirely numeric"),
        ("lee.learner", None, "too similar"),
        (NEW_PASSWORD, "Blue-Kettle-Morning-43", "do not match"),
        ("", "", "Enter the new password."),
    ],
    ids=["too short", "too common", "numeric", "like the username", "mismatch", "empty"],
)
def test_a_reset_password_must_pass_the_validators(staff_client, learner, password, again, error):
    response = reset(staff_client, learner, password, again)

    assert response.status_code == 200
    assert error in error_summary(response)
    learner.user.refresh_from_db()
    assert learner.user.check_password(PASSWORD)
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.PASSWORD_RESET).exists()


def test_a_reset_page_does_not_keep_what_was_typed(staff_client, learner):
    response = reset(staff_client, learner, NEW_PASSWORD, "something-else-entirely")

    # The form is shown again with its error, not an error page, and without the passwords.
    assert response.status_code == 200
    assert "do not match" in error_summary(response)
    assert 'name="new_password1"' in response.content.decode()
    assert NEW_PASSWORD not in response.content.decode()


@pytest.mark.parametrize("method", ["get", "post"])
def test_learners_get_404_and_anonymous_users_sign_in_at_the_reset_page(
    client, learner, other_learner, method
):
    anonymous = getattr(client, method)(reset_path(learner))
    assert anonymous.url == f"{LOGIN}?next={reset_path(learner)}"

    client.force_login(other_learner.user)
    assert getattr(client, method)(reset_path(learner)).status_code == 404
    client.force_login(learner.user)
    data = {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    assert getattr(client, method)(reset_path(learner), data).status_code == 404

    learner.user.refresh_from_db()
    assert learner.user.check_password(PASSWORD)


def test_staff_cannot_reset_an_account_that_is_also_staff(staff_client, db):
    linked = make_learner("ada.admin", "u-ada")
    User.objects.filter(pk=linked.user.pk).update(is_staff=True, is_superuser=True)

    assert staff_client.get(reset_path(linked)).status_code == 404
    assert reset(staff_client, linked).status_code == 404
