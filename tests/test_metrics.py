"""/metrics: off unless a token or an address allow-list is set; the figures operators watch."""

import os
import subprocess
import sys
import textwrap

import pytest
from django.conf import settings
from django.utils import timezone
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest, multiprocess

from assessments.models import AssessmentAttempt
from imports.models import ImportJob
from schools.models import School
from tests.factories import make_attempt, make_learner
from tests.journeys import attempt_url, ready_to_send, register_pupil

pytestmark = pytest.mark.django_db

TOKEN = "metrics-token-0123456789abcdef"


def test_metrics_are_off_by_default(client):
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer anything").status_code == 404


def test_the_token_opens_them_and_a_wrong_one_does_not(client, settings):
    settings.METRICS_TOKEN = TOKEN
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Basic {TOKEN}").status_code == 404
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")


def test_an_allowed_address_reads_them_without_a_token(client, settings):
    settings.METRICS_ALLOWED_IPS = ["10.0.0.0/8"]
    assert client.get("/metrics", REMOTE_ADDR="10.9.8.7").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 404


def test_through_a_proxy_only_the_token_opens_them(client, settings):
    # nginx on the same machine: every visitor's request arrives from 127.0.0.1.
    settings.METRICS_ALLOWED_IPS = ["127.0.0.1"]
    settings.AUDIT_TRUST_X_FORWARDED_FOR = True
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200
    proxied = {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "203.0.113.9"}
    assert client.get("/metrics", **proxied).status_code == 404
    faked = {"REMOTE_ADDR": "203.0.113.9", "HTTP_X_FORWARDED_FOR": "127.0.0.1"}
    assert client.get("/metrics", **faked).status_code == 404
    settings.METRICS_TOKEN = TOKEN
    assert (
        client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}", **proxied).status_code == 200
    )


def test_they_hold_the_figures_operators_watch(client, settings, learner):
    settings.METRICS_TOKEN = TOKEN
    make_attempt(learner, state=AssessmentAttempt.State.SUBMIT_PENDING)
    client.post("/accounts/login/", {"username": "nobody.here", "password": "wrong-password"})
    client.get("/learners/12345/")
    text = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content.decode()
    for name in (
        "portal_request_duration_seconds_bucket",
        "portal_requests_in_progress",
        "portal_upstream_call_duration_seconds",
        "portal_upstream_circuit_open 0.0",
        'portal_work_waiting{queue="deliveries"} 1.0',
        'portal_work_oldest_waiting_seconds{queue="deliveries"}',
        'portal_work_running{queue="imports"} 0.0',
        "portal_sign_in_failures_total",
        "portal_sign_in_locks_total",
    ):
        assert name in text, name
    assert 'route="/learners/<int:pk>/"' in text
    assert "12345" not in text


def test_with_several_schools_each_schools_work_has_its_own_series(client, settings, learner):
    settings.METRICS_TOKEN = TOKEN
    first = School.default()  # the learner's
    bravo = School.objects.create(code="BRAVO", name="Bravo Academy")
    pupil = make_learner("zed.bravo", "u-zed", school=bravo)
    make_attempt(learner, state=AssessmentAttempt.State.SUBMIT_PENDING)
    for assessment_id in (42, 43):
        make_attempt(pupil, assessment_id=assessment_id, state=AssessmentAttempt.State.SUBMITTED)
    now = timezone.now()
    ImportJob.objects.create(
        filename="bravo.csv",
        state=ImportJob.State.RUNNING,
        created_at=now,
        confirmed_at=now,
        started_at=now,
        school=bravo,
    )

    text = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content.decode()

    for line in (
        f'portal_work_waiting{{queue="deliveries",school="{first.code}"}} 1.0',
        'portal_work_waiting{queue="deliveries",school="BRAVO"} 0.0',
        f'portal_work_waiting{{queue="results",school="{first.code}"}} 0.0',
        'portal_work_waiting{queue="results",school="BRAVO"} 2.0',
        'portal_work_running{queue="imports",school="BRAVO"} 1.0',
        f'portal_work_running{{queue="imports",school="{first.code}"}} 0.0',
        'portal_work_oldest_waiting_seconds{queue="imports",school="BRAVO"} 0.0',
    ):
        assert line in text, line
    assert 'portal_work_waiting{queue="deliveries"}' not in text  # no total beside them


def sample(name: str, **labels: str) -> float:
    """Read one figure as this process counts it (other tests in it count too)."""
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_upstream_calls_are_counted_by_endpoint_and_outcome(client, learner, upstream):
    name = "portal_upstream_call_duration_seconds_count"
    before = sample(name, endpoint="next-assessment", outcome="rejected")
    client.force_login(learner.user)
    client.post("/me/start/")  # the sandbox does not know this learner: refused
    assert sample(name, endpoint="next-assessment", outcome="rejected") == before + 1


def test_results_not_ready_yet_are_counted_apart_from_refusals(client, staff, upstream):
    name = "portal_upstream_call_duration_seconds_count"
    not_ready = sample(name, endpoint="results", outcome="not_ready")
    rejected = sample(name, endpoint="results", outcome="rejected")
    attempt = ready_to_send(client, register_pupil(staff))
    upstream.state.faults.add("results", "error", status=404, times=1)
    client.post(attempt_url(attempt, "submit/"))  # sent, then the results are not there yet
    assert sample(name, endpoint="results", outcome="not_ready") == not_ready + 1
    assert sample(name, endpoint="results", outcome="rejected") == rejected


def test_sign_in_failures_and_locks_are_counted(client, settings, staff):
    settings.LOGIN_FAILURE_LIMIT_PER_USERNAME = 2
    failures = sample("portal_sign_in_failures_total")
    locks = sample("portal_sign_in_locks_total", scope="account_address")
    for _ in range(3):
        client.post("/accounts/login/", {"username": staff.username, "password": "not-it-at-all"})
    assert sample("portal_sign_in_failures_total") == failures + 3
    assert sample("portal_sign_in_locks_total", scope="account_address") == locks + 1


WORKER = textwrap.dedent(
    """
    import django
    django.setup()
    from ops import metrics
    for _ in range({count}):
        metrics.observe_request("/me/", "GET", 200, 0.02)
    metrics.REQUESTS_IN_PROGRESS.inc()
    """
)


def test_several_processes_add_up_in_multiprocess_mode(tmp_path):
    environment = {
        **os.environ,
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "portal.settings",
    }
    for count in (3, 4):  # two gunicorn workers, as it were
        subprocess.run(
            [sys.executable, "-c", WORKER.format(count=count)],
            cwd=settings.BASE_DIR,
            env=environment,
            check=True,
            timeout=60,
        )
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=str(tmp_path))
    text = generate_latest(registry).decode()
    assert (
        'portal_request_duration_seconds_count{method="GET",route="/me/",status="2xx"} 7.0' in text
    )
