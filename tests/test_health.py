"""/healthz and /readyz, as a load balancer polls them: small JSON, 503 when not ready."""

import time
from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.test import override_settings
from django.utils import timezone

from assessments.models import AssessmentAttempt
from ops import health
from partner_api.models import UpstreamHealth
from tests.factories import make_attempt

State = AssessmentAttempt.State


@pytest.fixture(autouse=True)
def fresh_migrations_check():
    """Each test checks the migrations itself: a yes is otherwise kept by the process."""
    health.forget_migrations_check()
    yield
    health.forget_migrations_check()


def test_healthz_answers_without_the_database(client):
    # No database in this test: any query would raise.
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_is_ready_when_database_cache_and_migrations_are(client):
    response = client.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ready"
    assert body["checks"] == {"database": "ok", "cache": "ok", "migrations": "ok"}
    assert body["upstream"] == {"circuit": "closed"}
    assert body["work"]["deliveries"] == {"waiting": 0, "oldest_waiting_seconds": None}
    assert response["Cache-Control"] == "no-store"


@pytest.mark.django_db
def test_readyz_is_not_ready_while_a_migration_is_unapplied(client):
    # The newest migration of an app, as if the code was deployed before `migrate` ran.
    app, name = next(
        node for node in MigrationLoader(None).graph.leaf_nodes() if node[0] == "portal"
    )
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM django_migrations WHERE app = %s AND name = %s", [app, name])
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["migrations"] == "failing"
    assert response.json()["status"] == "not ready"


@pytest.mark.django_db
def test_readyz_is_not_ready_when_the_cache_is_down(client):
    down = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://:cache-password-123@127.0.0.1:1/2",  # nothing listens there
        }
    }
    with override_settings(CACHES=down):
        response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["cache"] == "failing"
    assert "cache-password-123" not in response.content.decode()


@pytest.mark.django_db
def test_readyz_reports_waiting_deliveries_and_an_open_circuit_but_stays_ready(
    client, settings, learner
):
    attempt = make_attempt(learner, state=State.SUBMIT_PENDING)
    attempt.submitted_at = timezone.now() - timedelta(minutes=10)
    attempt.save(update_fields=["submitted_at"])
    UpstreamHealth.objects.create(
        base_url=settings.PARTNER_API_BASE_URL,
        unavailable_until=timezone.now() + timedelta(minutes=1),
    )
    response = client.get("/readyz")
    # Taking every web process out because the upstream is down would help nobody.
    assert response.status_code == 200
    body = response.json()
    assert body["upstream"] == {"circuit": "open"}
    assert body["work"]["deliveries"]["waiting"] == 1
    assert 590 <= body["work"]["deliveries"]["oldest_waiting_seconds"] <= 900


@pytest.mark.django_db
def test_probes_answer_a_load_balancer_by_ip_over_http(client, settings):
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["portal.school.example"]
    for path in ("/healthz", "/readyz"):
        response = client.get(path, HTTP_HOST="10.0.0.5:8000")
        assert response.status_code == 200, path
    # Every other page still gets the host check.
    assert client.get("/accounts/login/", HTTP_HOST="10.0.0.5:8000").status_code == 400


@pytest.mark.django_db
def test_a_probe_is_nobodys_activity(client, learner):
    client.force_login(learner.user)
    session_before = dict(client.session)
    response = client.get("/readyz")
    assert response.status_code == 200
    assert "Set-Cookie" not in response.headers
    assert dict(client.session) == session_before


@pytest.mark.django_db
def test_readyz_is_cheap_enough_to_poll_every_second(client, django_assert_max_num_queries):
    client.get("/readyz")  # the first checks the migrations; the next ones remember
    # SELECT 1, the published circuit state and one count per work queue.
    with django_assert_max_num_queries(5):
        client.get("/readyz")
    started = time.perf_counter()
    for _ in range(20):
        assert client.get("/readyz").status_code == 200
    per_call = (time.perf_counter() - started) / 20
    assert per_call < 0.1, f"{per_call * 1000:.1f} ms per /readyz"
