"""With Redis stopped, a real portal process serves every page from the database, then recovers."""

import json
import re
import threading

import pytest

from accounts.hashers import PortalArgon2PasswordHasher
from accounts.models import StaffRole
from tests.factories import PASSWORD, make_learner, make_staff
from tests.own_redis import own_redis
from tests.shared_redis import Browser, free_port, shared_redis, wait_until

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]

LOCKED = "Too many attempts"
TOKEN = "metrics-token-for-this-test"


def with_portal_hash(user) -> None:
    """Give the account a password the portal process's own (default) hashers can check."""
    hasher = PortalArgon2PasswordHasher()
    user.password = hasher.encode(PASSWORD, hasher.salt())
    user.save()


def readiness(browser: Browser, web) -> tuple[int, dict]:
    status, body, _ = browser.request(web, "GET", "/readyz")
    return status, json.loads(body)


def metric(web, name: str) -> float:
    """Return the sum of a metric's series on /metrics."""
    from http.client import HTTPConnection

    connection = HTTPConnection("127.0.0.1", web.port, timeout=60)
    connection.request("GET", "/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    text = connection.getresponse().read().decode()
    connection.close()
    return sum(float(v) for v in re.findall(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M))


def test_with_redis_stopped_every_page_works_from_the_database_then_redis_takes_over_again():
    lead = make_staff("lena.lead", role=StaffRole.DSL)
    with_portal_hash(lead)
    pupil = make_learner("remy.redis", "u-remy")
    with_portal_hash(pupil.user)
    for name in ("guess.target", "late.comer"):
        with_portal_hash(make_learner(name, f"u-{name}").user)
    dead_upstream = f"http://127.0.0.1:{free_port()}/plapi/v1/partners"

    with (
        own_redis() as redis_server,
        shared_redis(
            dead_upstream,
            CACHE_URL=redis_server.url(),
            REDIS_RETRY_CAP="1",
            METRICS_TOKEN=TOKEN,
            LOGIN_FAILURE_LIMIT_PER_USERNAME="3",
        ) as shared,
        shared.server() as web,
    ):
        staff, learner = Browser(), Browser()
        assert staff.sign_in(web, "lena.lead", PASSWORD)[0] == 302
        assert learner.sign_in(web, "remy.redis", PASSWORD)[0] == 302
        status, body = readiness(Browser(), web)
        assert status == 200 and body["status"] == "ready" and body["checks"]["cache"] == "ok"

        redis_server.stop()

        status, page, _ = staff.request(web, "GET", "/dashboard/")
        assert status == 200 and "Cohort dashboard" in page
        status, page, _ = learner.request(web, "GET", "/me/privacy/")
        assert status == 200 and "Back to my assessments" in page
        status, page, _ = Browser().request(web, "GET", "/card/")
        assert status == 200 and "Sign in with your card" in page
        newcomer = Browser()
        assert newcomer.sign_in(web, "late.comer", PASSWORD)[0] == 302
        status, page, _ = newcomer.request(web, "GET", "/me/privacy/")
        assert status == 200 and "Back to my assessments" in page

        # The throttle counts in the database: of simultaneous guesses, at most the limit
        # are checked, and the account is then locked.
        answers = []

        def guess():
            answers.append(Browser().sign_in(web, "guess.target", "not the password"))

        guessers = [threading.Thread(target=guess) for _ in range(8)]
        for thread in guessers:
            thread.start()
        for thread in guessers:
            thread.join(timeout=120)
        assert len(answers) == 8 and all(status == 200 for status, _, _ in answers)
        assert sum(LOCKED not in page for _, page, _ in answers) <= 3
        status, page, _ = Browser().sign_in(web, "guess.target", PASSWORD)
        assert status == 200 and LOCKED in page

        status, body = readiness(Browser(), web)
        assert status == 200 and body["status"] == "degraded"
        assert body["checks"]["cache"] == "degraded"
        assert metric(web, "portal_cache_fallbacks_total") > 0
        assert metric(web, "portal_cache_degraded") == 1

        redis_server.start()  # empty, as after a restart

        wait_until(
            lambda: readiness(Browser(), web)[1]["status"] == "ready",
            timeout=60,
            what="/readyz to say ready once Redis is back",
        )
        wait_until(
            lambda: metric(web, "portal_cache_degraded") == 0,
            timeout=60,
            what="the process to go back to Redis",
        )
        status, page, _ = staff.request(web, "GET", "/dashboard/")
        assert status == 200 and "Cohort dashboard" in page
        # The lock set without Redis moved to Redis with the rest of its time.
        status, page, _ = Browser().sign_in(web, "guess.target", PASSWORD)
        assert status == 200 and LOCKED in page
        log = web.log_path.read_text(errors="replace")

    assert log.count("Redis cannot be reached") == 1, log
    assert log.count("Redis answers again") == 1, log
    assert "Traceback" not in log, log
