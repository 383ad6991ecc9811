"""Staff give a second factor (django-allauth's mfa app) at sign-in, and again on step-up pages.

With the Django test client: a member of staff without a factor reaches only the setup pages,
sets up an authenticator app from the key shown on the page (its codes computed by pyotp), is
asked for a code at the next sign-in, is throttled on wrong codes as on wrong passwords, and is
asked again before the most sensitive pages once MFA_STEP_UP_MINUTES have passed; a POST
interrupted by that question goes on after the right code. Learners never see any of it.
"""

import html
import re
import threading
import time

import pyotp
import pytest
import requests
from allauth.account.internal.flows.login import AUTHENTICATION_METHODS_SESSION_KEY
from allauth.mfa.models import Authenticator
from allauth.mfa.recovery_codes.internal.auth import RecoveryCodes
from allauth.mfa.totp.internal.auth import TOTP, generate_totp_secret
from django.contrib.auth.models import User

from learners.models import Learner
from safeguarding.asking import alert_raise_for_request
from safeguarding.models import Alert
from tests.factories import PASSWORD, make_learner, make_staff

pytestmark = pytest.mark.mfa

LOGIN = "/accounts/login/"
SETUP = "/accounts/2fa/"
ACTIVATE = "/accounts/2fa/totp/activate/"
AUTHENTICATE = "/accounts/2fa/authenticate/"
REAUTHENTICATE = "/accounts/2fa/reauthenticate/"
ALERTS = "/safeguarding/"
TOO_MANY = "Too many attempts. Try again in 15 minutes."
# The default limit for one account from one address (LOGIN_FAILURE_LIMIT_PER_USERNAME).
ACCOUNT_FROM_ONE_ADDRESS = 5


@pytest.fixture(autouse=True)
def one_window_either_side(settings):
    """Accept the codes of the 30 seconds before and after (as phones drift), so that a test
    can give a code not yet used: allauth refuses a code used once in its window."""
    settings.MFA_TOTP_TOLERANCE = 1


def password_sign_in(client, username: str):
    return client.post(LOGIN, {"username": username, "password": PASSWORD})


def with_authenticator_app(user: User) -> pyotp.TOTP:
    """Set up an authenticator app for the user (as the setup page does); return the app."""
    secret = generate_totp_secret()
    TOTP.activate(user, secret)
    return pyotp.TOTP(secret)


def code_not_yet_used(app: pyotp.TOTP, used: set[str]) -> str:
    """Return a code the app showed in the last, this or the next 30 seconds, not yet given."""
    now = time.time()
    for moment in (now, now + 30, now - 30):
        code = app.at(moment)
        if code not in used:
            used.add(code)
            return code
    raise AssertionError("three windows' codes all used")


def signed_in_with_a_code(client, user: User, app: pyotp.TOTP, used: set[str]) -> None:
    assert password_sign_in(client, user.username)["Location"] == AUTHENTICATE
    response = client.post(AUTHENTICATE, {"code": code_not_yet_used(app, used)})
    assert response.status_code == 302 and response["Location"] == "/"


def step_up_overdue(client, settings) -> None:
    """Move this session's second factor back to just over MFA_STEP_UP_MINUTES ago."""
    session = client.session
    records = session[AUTHENTICATION_METHODS_SESSION_KEY]
    for record in records:
        record["at"] -= settings.MFA_STEP_UP_MINUTES * 60 + 1
    session[AUTHENTICATION_METHODS_SESSION_KEY] = records
    session.save()


def page_text(response) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode()))


def test_staff_without_a_second_factor_reach_only_the_pages_that_set_one_up(client, staff):
    response = password_sign_in(client, staff.username)
    assert response.status_code == 302

    for page in ["/dashboard/", "/learners/", "/admin/", ALERTS]:
        response = client.get(page)
        assert response.status_code == 302 and response["Location"] == SETUP, page
    setup = client.get(SETUP)
    assert setup.status_code == 200
    assert "Every member of staff gives a second factor when they sign in." in page_text(setup)
    assert "Set up an authenticator app" in page_text(setup)
    assert "Add a passkey or security key" in page_text(setup)
    assert client.get(ACTIVATE).status_code == 200


def test_learners_are_never_asked_and_never_see_the_second_factor_pages(client, learner):
    response = password_sign_in(client, learner.username)
    assert response.status_code == 302 and response["Location"] == "/"

    assert client.get("/me/").status_code == 200
    for page in [SETUP, ACTIVATE, "/accounts/2fa/webauthn/add/", REAUTHENTICATE]:
        assert client.get(page).status_code == 404, page


# allauth sends authenticator_added once the setup is committed: no test transaction around it.
@pytest.mark.django_db(transaction=True)
def test_an_authenticator_app_set_up_from_the_key_on_the_page_opens_the_portal(client, staff):
    password_sign_in(client, staff.username)

    page = client.get(ACTIVATE)
    assert page.status_code == 200
    shown = re.search(
        r'<code class="totp-secret" id="authenticator_secret"[^>]*>(.*?)</code>',
        page.content.decode(),
        re.S,
    )
    key = re.sub(r"<[^>]+>|\s", "", shown[1])
    assert re.fullmatch(r"[A-Z2-7]{32}", key), key
    # The QR code is drawn inline (CSP allows no data: images) and labelled.
    assert b'<span class="qr" role="img" aria-label="QR code for your authenticator app"><svg' in (
        page.content
    )
    assert b"data:image" not in page.content

    wrong = client.post(ACTIVATE, {"code": "000000"})
    assert wrong.status_code == 200 and "That code is not right." in page_text(wrong)
    response = client.post(ACTIVATE, {"code": pyotp.TOTP(key).now()})
    assert response.status_code == 302
    codes_page = client.get(response["Location"])
    assert "You will not see them again" in page_text(codes_page)
    codes = re.findall(r"<li><code>(\w+)</code></li>", codes_page.content.decode())
    assert len(codes) == 10
    # Shown once: the page no longer lists them.
    again = client.get(response["Location"])
    assert "10 of your 10 recovery codes are unused." in page_text(again)
    assert codes[0] not in again.content.decode()
    # Setting it up gave the factor for this session: the portal opens.
    assert client.get("/learners/").status_code == 200
    assert Authenticator.objects.filter(user=staff, type="totp").exists()


def test_the_next_sign_in_asks_for_the_code_before_signing_in(client, staff):
    app = with_authenticator_app(staff)

    response = password_sign_in(client, staff.username)

    assert response.status_code == 302 and response["Location"] == AUTHENTICATE
    asked = client.get(AUTHENTICATE)
    assert asked.status_code == 200 and "Enter your code" in page_text(asked)
    # Not signed in before the code: a staff page sends back to sign in.
    assert client.get("/learners/")["Location"].startswith(LOGIN)
    wrong = client.post(AUTHENTICATE, {"code": "000000"})
    assert wrong.status_code == 200 and "That code is not right." in page_text(wrong)
    assert client.get("/learners/")["Location"].startswith(LOGIN)
    assert client.post(AUTHENTICATE, {"code": app.now()})["Location"] == "/"
    assert client.get("/learners/").status_code == 200


def test_wrong_codes_lock_sign_in_as_wrong_passwords_do(client, staff, monkeypatch):
    app = with_authenticator_app(staff)
    password_sign_in(client, staff.username)
    checks = []
    original = TOTP.validate_code
    monkeypatch.setattr(
        TOTP, "validate_code", lambda self, code: checks.append(code) or original(self, code)
    )

    for _ in range(ACCOUNT_FROM_ONE_ADDRESS):
        assert "That code is not right." in page_text(client.post(AUTHENTICATE, {"code": "1"}))
    refused = client.post(AUTHENTICATE, {"code": app.now()})

    assert refused.status_code == 200 and TOO_MANY in page_text(refused)
    assert len(checks) == ACCOUNT_FROM_ONE_ADDRESS  # the right one was never checked
    assert client.get("/learners/")["Location"].startswith(LOGIN)
    # The account is locked for its password too: the same throttle.
    client.logout()
    assert TOO_MANY in page_text(password_sign_in(client, staff.username))


def test_a_recovery_code_signs_in_once(client, staff):
    with_authenticator_app(staff)
    code = RecoveryCodes.activate(staff).generate_codes()[0]

    password_sign_in(client, staff.username)
    assert client.post(AUTHENTICATE, {"code": code})["Location"] == "/"
    assert client.get("/learners/").status_code == 200
    client.post("/accounts/logout/")

    password_sign_in(client, staff.username)
    used = client.post(AUTHENTICATE, {"code": code})
    assert used.status_code == 200 and "That code is not right." in page_text(used)


def test_the_alerts_ask_for_the_code_again_after_the_step_up_minutes(client, staff, settings):
    app, used = with_authenticator_app(staff), set()
    signed_in_with_a_code(client, staff, app, used)
    assert client.get(ALERTS).status_code == 200  # given just now

    step_up_overdue(client, settings)
    response = client.get(ALERTS)

    assert response.status_code == 302
    assert response["Location"] == f"{REAUTHENTICATE}?next=%2Fsafeguarding%2F"
    asked = client.get(response["Location"])
    assert "Confirm it's you" in page_text(asked)
    assert "Use your password" not in page_text(asked)  # a password is no second factor
    back = client.post(response["Location"], {"code": code_not_yet_used(app, used)})
    assert back.status_code == 302 and back["Location"] == ALERTS
    assert client.get(ALERTS).status_code == 200


def test_the_step_up_pages_and_default(client, staff, settings):
    assert settings.MFA_STEP_UP_MINUTES == 15
    learner = make_learner("pat.pupil", "u-pat")
    alert, _new = alert_raise_for_request(learner=learner)  # the pupil asked for help
    app, used = with_authenticator_app(staff), set()
    signed_in_with_a_code(client, staff, app, used)
    step_up_overdue(client, settings)

    for page in [
        ALERTS,
        f"/safeguarding/alerts/{alert.pk}/",
        f"/safeguarding/learners/{learner.pk}/",
        f"/safeguarding/learners/{learner.pk}/print/",
        f"/learners/{learner.pk}/export/",
        f"/learners/{learner.pk}/erase/",
        "/learners/results.csv",
    ]:
        response = client.get(page)
        assert response.status_code == 302, page
        assert response["Location"].startswith(REAUTHENTICATE), page
    assert client.get("/learners/").status_code == 200  # other pages go on as before


def test_an_erasure_asked_for_after_the_step_up_minutes_is_done_after_the_code(
    client, staff, settings
):
    learner = make_learner("pat.pupil", "u-pat")
    Alert.objects.filter(learner=learner).delete()
    app, used = with_authenticator_app(staff), set()
    signed_in_with_a_code(client, staff, app, used)
    erase = f"/learners/{learner.pk}/erase/"
    assert client.get(erase).status_code == 200
    step_up_overdue(client, settings)

    response = client.post(erase, {"erase": "1"})

    assert response.status_code == 302 and response["Location"].startswith(REAUTHENTICATE)
    learner.refresh_from_db()
    assert learner.status == Learner.Status.ACTIVE  # not before the code
    done = client.post(response["Location"], {"code": code_not_yet_used(app, used)})
    assert done.status_code == 302 and done["Location"] == "/learners/"
    learner.refresh_from_db()
    assert learner.status == Learner.Status.ERASED


def test_staff_keep_their_last_authenticator_app(client, staff):
    app, used = with_authenticator_app(staff), set()
    signed_in_with_a_code(client, staff, app, used)

    page = client.get("/accounts/2fa/totp/deactivate/")
    assert "Every member of staff keeps a second factor." in page_text(page)
    client.post("/accounts/2fa/totp/deactivate/")

    assert Authenticator.objects.filter(user=staff, type="totp").exists()


@pytest.mark.django_db(transaction=True)
def test_forty_simultaneous_code_guesses_check_no_more_codes_than_the_limit(
    live_server, monkeypatch
):
    staff = make_staff("guessed.staff")
    with_authenticator_app(staff)
    checks = []
    lock = threading.Lock()
    original = TOTP.validate_code

    def counting(self, code):
        with lock:
            checks.append(code)
        return original(self, code)

    monkeypatch.setattr(TOTP, "validate_code", counting)
    # Forty browsers that got past the password (one after another: right passwords).
    sessions = []
    for _ in range(40):
        session = requests.Session()
        page = session.get(live_server.url + LOGIN, timeout=60)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]
        response = session.post(
            live_server.url + LOGIN,
            data={"username": staff.username, "password": PASSWORD, "csrfmiddlewaretoken": token},
            allow_redirects=False,
            timeout=60,
        )
        assert response.headers["Location"] == AUTHENTICATE
        page = session.get(live_server.url + AUTHENTICATE, timeout=60)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]
        sessions.append((session, token))
    barrier = threading.Barrier(len(sessions))
    answers: list = [None] * len(sessions)

    def guess(index: int) -> None:
        session, token = sessions[index]
        try:
            barrier.wait(timeout=60)
            answers[index] = session.post(
                live_server.url + AUTHENTICATE,
                data={"code": f"{index:06d}", "csrfmiddlewaretoken": token},
                allow_redirects=False,
                timeout=60,
            )
        except Exception as error:  # collected for the assertions
            answers[index] = error

    threads = [threading.Thread(target=guess, args=(i,)) for i in range(len(sessions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert all(isinstance(answer, requests.Response) for answer in answers), answers
    assert all(answer.status_code == 200 for answer in answers)
    assert sum(TOO_MANY in answer.text for answer in answers) >= 40 - ACCOUNT_FROM_ONE_ADDRESS
    assert 1 <= len(checks) <= ACCOUNT_FROM_ONE_ADDRESS


# What a password alone must never do for someone who has a factor ----------------------------


def test_the_admins_own_sign_in_sends_a_superuser_to_the_portals_with_its_second_factor(
    client, superuser
):
    with_authenticator_app(superuser)

    response = client.post(
        "/admin/login/?next=/admin/", {"username": superuser.username, "password": PASSWORD}
    )

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=%2Fadmin%2F"
    assert "_auth_user_id" not in client.session
    assert client.get("/admin/login/")["Location"].startswith("/accounts/login/")


def test_a_session_without_its_factor_may_give_it_but_not_add_another_or_new_codes(client, staff):
    app = with_authenticator_app(staff)
    RecoveryCodes.activate(staff)
    client.force_login(staff)  # e.g. signed in before the second factor was asked for

    for page in [
        "/accounts/2fa/recovery-codes/generate/",
        "/accounts/2fa/webauthn/add/",
        ACTIVATE,
        SETUP,
        "/admin/",
    ]:
        response = client.get(page)
        assert response.status_code == 302, page
        assert response["Location"].startswith(REAUTHENTICATE + "?next="), page
    asked = client.get(REAUTHENTICATE)
    assert asked.status_code == 200
    assert 'name="code"' in asked.content.decode()

    gave = client.post(REAUTHENTICATE + "?next=/dashboard/", {"code": app.now()})
    assert gave.status_code == 302 and gave["Location"] == "/dashboard/"
    assert client.get("/dashboard/").status_code == 200


def test_a_post_held_up_for_the_second_factor_is_not_kept_to_be_replayed(client, staff, learner):
    with_authenticator_app(staff)
    client.force_login(staff)

    response = client.post(f"/learners/{learner.pk}/erase/", {"confirm": "yes"})

    assert response.status_code == 302
    assert response["Location"].startswith(REAUTHENTICATE + "?next=")
    assert "account_reauthentication_state" not in client.session


def test_signing_in_again_between_wrong_codes_never_clears_their_count(client, staff, settings):
    app = with_authenticator_app(staff)
    wrong = str((int(app.now()) + 1) % 1_000_000).zfill(6)

    refused = []
    for _round in range(3):  # password, two wrong codes; three times: six wrong codes
        response = password_sign_in(client, staff.username)
        if response.status_code != 302:
            refused.append("password")
            break
        for _ in range(2):
            answer = client.post(AUTHENTICATE, {"code": wrong})
            if TOO_MANY in page_text(answer):
                refused.append("code")

    assert refused, "six wrong codes went through the per-account limit of five"
    locked = password_sign_in(client, staff.username)
    assert locked.status_code == 200
    assert TOO_MANY in page_text(locked)


def test_staff_without_a_factor_set_one_up_however_long_ago_they_signed_in(client, staff):
    client.force_login(staff)  # no record of a recent sign-in, and perhaps no password at all

    response = client.get(ACTIVATE)

    assert response.status_code == 200
    assert 'id="authenticator_secret"' in response.content.decode()
