"""Shared fixtures: a few named people, and the sandbox upstream over real HTTP."""

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.core.cache import cache
from django_tasks import task_backends

from assessments import page_markup, results_markup
from learners.models import Learner
from ops.database import outage
from partner_api.calls import (
    add_call_listener,
    add_circuit_listener,
    remove_call_listener,
    remove_circuit_listener,
)
from partner_api.resilience import reset_circuit_breakers
from partner_api.upstream import publish_circuit_change, record_failed_call
from sandbox.server import DEMO_API_KEY, start_sandbox
from schools.models import forget_schools_memo
from tests.axe_coverage import (  # noqa: F401 (hooks, registered by being imported here)
    pytest_runtest_logreport,
    pytest_sessionfinish,
    pytest_testnodedown,
)
from tests.chromium import CHROMIUM, CHROMIUM_LAUNCH_ARGS, require_chromium
from tests.factories import PASSWORD, make_dsl_on_duty, make_learner, make_staff
from tests.quick_flush import no_post_migrate_signal, sql_flush_by_delete


@pytest.fixture(scope="session", autouse=True)
def quick_flush():
    """Empty PostgreSQL's tables after a transactional test by DELETE (tests/quick_flush.py)."""
    from django.core.management.commands import flush
    from django.db.backends.postgresql.operations import DatabaseOperations

    with pytest.MonkeyPatch.context() as patch:
        if django_settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
            patch.setattr(DatabaseOperations, "sql_flush", sql_flush_by_delete)
            patch.setattr(flush, "emit_post_migrate_signal", no_post_migrate_signal)
        yield


@pytest.fixture(params=[(1280, 800), (360, 640)], ids=["laptop", "phone"])
def viewport(request) -> dict:
    """A laptop's window and a phone's, where the layout differs: a test asking runs at both."""
    width, height = request.param
    return {"width": width, "height": height}


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Hash test passwords cheaply: the real hasher is deliberately slow."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def quick_upstream_calls(settings):
    """One attempt per call and no real sleeping, breaker off, unless a test says otherwise."""
    settings.PARTNER_API_RETRY_MAX_ATTEMPTS = 1
    settings.PARTNER_API_RETRY_BACKOFF = 0
    settings.PARTNER_API_RETRY_BACKOFF_CAP = 0
    settings.PARTNER_API_RETRY_AFTER_CAP = 0
    settings.PARTNER_API_BREAKER_THRESHOLD = 0
    settings.SUBMISSION_QUIET_PERIOD = 0  # tests resend at once; one test checks the wait
    settings.UPSTREAM_HEALTH_CACHE_SECONDS = 0  # banner tests see each change at once
    reset_circuit_breakers()
    yield
    reset_circuit_breakers()


@pytest.fixture(autouse=True)
def fresh_cache():
    """Sign-in throttling counts live in the cache: no test inherits another's.

    The markup this process keeps goes too: a test database may give a new result the id and
    time of an earlier test's.
    """
    cache.clear()
    page_markup.RECENT_PAGES.clear()
    forget_schools_memo()  # a rolled-back test's schools never reach the next one
    results_markup.RECENT_RESULTS.clear()
    yield
    cache.clear()


# Staff tests sign in with a password alone, unless marked `mfa` (second_factor_asked below):
# set here, not in a fixture, so that module- and session-scoped fixtures see it too.
# STAFF_MFA_REQUIRED is on in every real deployment; the tests of the second factor and of the
# pages that step up turn it on and give one.
django_settings.STAFF_MFA_REQUIRED = False


@pytest.fixture(autouse=True)
def second_factor_asked(request, settings):
    """Turn STAFF_MFA_REQUIRED on for a test marked `mfa`."""
    if request.node.get_closest_marker("mfa") is not None:
        settings.STAFF_MFA_REQUIRED = True


@pytest.fixture(autouse=True)
def database_never_went_away():
    """No test inherits another's database outage (ops.database: when it was last seen back)."""
    outage.since = outage.last_ended = None


@pytest.fixture(autouse=True)
def immediate_tasks(settings):
    """Run background tasks at once in tests; deferred retries wait for the sweep."""
    settings.TASKS = {
        "default": {
            "BACKEND": "django_tasks.backends.immediate.ImmediateBackend",
            "QUEUES": ["default", "imports", "media"],
        }
    }


@pytest.fixture
def queued_tasks(settings):
    """Queue tasks without running them, as a real queue does until its worker takes them."""
    settings.TASKS = {
        "default": {
            "BACKEND": "django_tasks.backends.dummy.DummyBackend",
            "QUEUES": ["default", "imports", "media"],
        }
    }
    return task_backends["default"]


@pytest.fixture(autouse=True)
def roster_uploads_apart(settings, tmp_path_factory):
    """Keep uploaded rosters in a folder of the test's own, never the project's var/."""
    settings.ROSTER_UPLOAD_DIR = str(tmp_path_factory.getbasetemp() / "roster-uploads")


DB_FIXTURES = ("db", "transactional_db", "django_db_reset_sequences", "live_server")


@pytest.fixture(autouse=True)
def safeguarding_lead_on_duty(request):
    """Every test with a database has a DSL with an email address, as every real partner must.

    Assessments cannot start without one (accounts.access.safeguarding_ready); a test of that
    rule marks itself `no_dsl`.
    """
    wants_db = request.node.get_closest_marker("django_db") or any(
        name in request.fixturenames for name in DB_FIXTURES
    )
    if not wants_db or request.node.get_closest_marker("no_dsl"):
        return None
    if "transactional_db" in request.fixturenames or "live_server" in request.fixturenames:
        request.getfixturevalue("transactional_db")
    else:
        request.getfixturevalue("db")
    return make_dsl_on_duty()


@pytest.fixture
def staff(db) -> User:
    """A member of the partner's staff."""
    return make_staff("sam.staff")


@pytest.fixture
def superuser(db) -> User:
    return User.objects.create_superuser("root.admin", password=PASSWORD)


@pytest.fixture
def learner(db) -> Learner:
    return make_learner("lee.learner", "u-lee")


@pytest.fixture
def other_learner(db) -> Learner:
    return make_learner("olive.other", "u-olive")


@pytest.fixture
def staff_client(client, staff):
    client.force_login(staff)
    return client


@pytest.fixture
def learner_client(client, learner):
    client.force_login(learner.user)
    return client


@pytest.fixture
def upstream(settings):
    """The sandbox upstream on a free port, with the portal's settings pointed at it."""
    with start_sandbox(port=0, api_key=DEMO_API_KEY) as running:
        settings.PARTNER_API_BASE_URL = running.base_url
        settings.PARTNER_API_KEY = DEMO_API_KEY
        settings.PARTNER_API_TIMEOUT = (2.0, 5.0)
        yield running


@pytest.fixture
def without_failure_recording():
    """Unit tests of the client run without the database the failure recorder writes to."""
    remove_call_listener(record_failed_call)
    remove_circuit_listener(publish_circuit_change)
    yield
    add_call_listener(record_failed_call)
    add_circuit_listener(publish_circuit_change)


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium, headless; skipped when it is missing (failed if CI requires it)."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    # Playwright's synchronous API keeps an event loop running in this thread, which Django
    # takes for async code and refuses its ORM; the test's own database calls are plain sync.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=CHROMIUM_LAUNCH_ARGS
            )
            yield chromium
            chromium.close()
