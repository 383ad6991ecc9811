"""Two real processes sharing Redis agree: sign-in locks, the open circuit, sessions, the user."""

import pytest

from accounts.hashers import PortalArgon2PasswordHasher
from tests.factories import PASSWORD, make_learner
from tests.shared_redis import Browser, free_port, shared_redis

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]

LOCKED = "Too many attempts"
BANNER = "The assessment service is unavailable at the moment."
SIGNED_IN_PAGE = "/me/privacy/"  # a learner's page that never calls the upstream


def dead_upstream() -> str:
    """An upstream address nobody answers at: every call finds the service down."""
    return f"http://127.0.0.1:{free_port()}/plapi/v1/partners"


@pytest.fixture
def pupil():
    """A learner whose password the portal processes' own (default) hasher can check."""
    learner = make_learner("remy.redis", "u-remy")
    hasher = PortalArgon2PasswordHasher()
    learner.user.password = hasher.encode(PASSWORD, hasher.salt())
    learner.user.save()
    return learner


def signed_in(browser: Browser, server) -> bool:
    status, _, location = browser.request(server, "GET", SIGNED_IN_PAGE)
    assert status in (200, 302), status
    return status == 200 and not location


def test_a_sign_in_lock_reached_through_one_process_refuses_in_the_other(pupil):
    with (
        shared_redis(dead_upstream(), LOGIN_FAILURE_LIMIT_PER_USERNAME="3") as shared,
        shared.server() as a,
        shared.server() as b,
    ):
        status, page, _ = Browser().sign_in(a, "remy.redis", "not the password")
        assert status == 200 and LOCKED not in page
        for _ in range(2):  # the third failure reaches the limit: locked
            Browser().sign_in(a, "remy.redis", "not the password")

        browser = Browser()
        status, page, _ = browser.sign_in(b, "remy.redis", PASSWORD)

        assert status == 200 and LOCKED in page
        assert not signed_in(browser, b)


CALL_UPSTREAM = """
from partner_api import PartnerApiError, get_client
from partner_api.upstream import upstream_available
try:
    get_client().next_assessment("u-remy")
except PartnerApiError as error:
    print(type(error).__name__)
print("available" if upstream_available() else "unavailable")
"""


def test_a_circuit_opened_in_one_process_fails_fast_and_shows_in_the_others(pupil):
    breaker = {"PARTNER_API_BREAKER_THRESHOLD": "1", "PARTNER_API_BREAKER_COOLDOWN": "300"}
    with shared_redis(dead_upstream(), PARTNER_API_RETRY_MAX_ATTEMPTS="1", **breaker) as shared:
        # Process A finds the service down: its circuit opens (threshold 1).
        assert shared.run_django(CALL_UPSTREAM).split() == ["PartnerApiUnavailable", "unavailable"]

        # Process B has never called it, and fails fast without trying.
        assert shared.run_django(CALL_UPSTREAM).split() == ["PartnerApiCircuitOpen", "unavailable"]

        with shared.server() as web:
            browser = Browser()
            browser.sign_in(web, "remy.redis", PASSWORD)
            status, page, _ = browser.request(web, "GET", SIGNED_IN_PAGE)
        assert status == 200 and BANNER in page


def test_a_session_made_in_one_process_holds_in_the_other_and_survives_losing_redis(pupil):
    with shared_redis(dead_upstream()) as shared, shared.server() as a, shared.server() as b:
        browser = Browser()
        status, _, location = browser.sign_in(a, "remy.redis", PASSWORD)
        assert status == 302 and "login" not in location

        assert signed_in(browser, b)
        assert shared.flush() > 0  # the session, the cached user: as after a Redis restart
        assert signed_in(browser, b)
        assert signed_in(browser, a)


DEACTIVATE = """
from django.contrib.auth.models import User
user = User.objects.get(username="remy.redis")
user.is_active = False
user.save()
"""
CHANGE_PASSWORD = """
from django.contrib.auth.models import User
user = User.objects.get(username="remy.redis")
user.set_password("a whole new password")
user.save()
"""


@pytest.mark.parametrize("change", [DEACTIVATE, CHANGE_PASSWORD], ids=["deactivated", "password"])
def test_an_account_changed_in_another_process_signs_out_at_the_next_request(pupil, change):
    with shared_redis(dead_upstream()) as shared, shared.server() as a, shared.server() as b:
        browser = Browser()
        browser.sign_in(a, "remy.redis", PASSWORD)
        assert signed_in(browser, a) and signed_in(browser, b)  # the user is cached now

        shared.run_django(change)

        assert not signed_in(browser, b)
