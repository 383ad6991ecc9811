"""PostgreSQL may blink: pages say so with a 503, workers wait, upstream answers are kept.

The tests take the database away inside this process.
"""

from contextlib import contextmanager
from unittest import mock

import pytest
from django.db import OperationalError, connection
from django.test import Client
from django_tasks import TaskResultStatus, task
from django_tasks_db.models import DBTaskResult

import ops.database
import ops.worker
from learners.models import Learner
from ops.database import outage
from ops.worker import OutageTolerantWorker
from tests.factories import VALID
from tests.log_capture import console_output

REFUSED = 'connection failed: connection to server at "127.0.0.1", port 5432 failed: refused'


@contextmanager
def database_away():
    """Make every query of this thread fail as a stopped PostgreSQL makes it fail."""

    def refused(*args, **kwargs):
        raise OperationalError(REFUSED)

    with mock.patch.object(connection._connections["default"], "cursor", refused):
        yield


def assert_database_unavailable_page(response) -> str:
    """The plain-words 503 of a database that does not answer; return its text."""
    text = response.content.decode()
    assert response.status_code == 503, text[:2000]
    assert response["Retry-After"] == "10"
    assert "no-store" in response["Cache-Control"]
    assert "Something went wrong" not in text
    return text


def test_a_page_answers_503_with_retry_after_while_the_database_is_away(client, db):
    assert client.get("/accounts/login/").status_code == 200  # it reads the database

    with database_away(), console_output("plain") as output:
        response = client.get("/accounts/login/?next=/learners/")

    text = assert_database_unavailable_page(response)
    assert "The portal is briefly unavailable" in text
    assert "Anything you had saved is still saved" in text
    assert 'href="/accounts/login/?next=/learners/">Try again</a>' in text
    assert "GET /accounts/login/ 503 " in output.text  # the request log has it
    assert "The database does not answer (OperationalError: connection failed" in output.text
    # The same process answers as soon as the database does.
    assert client.get("/accounts/login/").status_code == 200
    assert outage.since is None


def test_a_signed_in_page_whose_session_cannot_be_read_answers_the_same_503(staff):
    client = Client(raise_request_exception=False)  # as a real server: handler500 answers
    client.force_login(staff)

    with database_away():
        response = client.get("/learners/")

    text = assert_database_unavailable_page(response)
    assert "The portal cannot reach its records just now" in text
    assert client.get("/learners/").status_code == 200


def failing_first(real, times: int):
    """Wrap a write so that its first `times` calls fail as a lost connection does."""
    calls = {"n": 0}

    def write(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] <= times:
            raise OperationalError("server closed the connection unexpectedly")
        return real(*args, **kwargs)

    return write


@pytest.mark.django_db(transaction=True)  # outside a transaction, as a real request
def test_a_registration_the_service_made_is_recorded_once_the_database_answers(
    staff_client, upstream, monkeypatch
):
    import learners.services

    activate = failing_first(learners.services.learner_activate, times=2)
    monkeypatch.setattr(learners.services, "learner_activate", activate)

    with console_output("plain") as output:
        response = staff_client.post("/learners/new/", VALID)

    assert response.status_code == 302, response.content.decode()[:2000]
    learner = Learner.objects.get(username=VALID["username"])
    assert learner.status == Learner.Status.ACTIVE and learner.upstream_user_id
    assert response["Location"] == f"/learners/{learner.pk}/"
    assert upstream.state.count(endpoint="create-learner") == 1
    assert f"Holding learner {learner.pk}'s registration" in output.text
    assert f"Wrote learner {learner.pk}'s registration, held through" in output.text


@pytest.mark.django_db(transaction=True)
def test_a_registration_the_database_never_took_tells_staff_not_to_register_again(
    staff_client, upstream, monkeypatch, settings
):
    import learners.services

    settings.DATABASE_OUTAGE_HOLD_IN_REQUEST = 0  # a request holds the answer no longer
    activate = failing_first(learners.services.learner_activate, times=1000)
    monkeypatch.setattr(learners.services, "learner_activate", activate)

    response = staff_client.post("/learners/new/", VALID)

    text = assert_database_unavailable_page(response)
    assert "nina.new is registered with the assessment service, but not in the portal" in text
    assert "Do not register nina.new again" in text
    assert [learner.username for learner in upstream.state.learners.values()] == ["nina.new"]
    outage.ended()


# ---- A worker whose task the database cut off -----------------------------------------------

RUNS: dict[str, int] = {"cut_off_once": 0, "always_cut_off": 0}


@task()
def cut_off_once() -> str:
    """Lose the database on the first run only."""
    RUNS["cut_off_once"] += 1
    if RUNS["cut_off_once"] == 1:
        raise OperationalError("server closed the connection unexpectedly")
    return "done"


@task()
def always_cut_off() -> None:
    """Lose the database on every run (as a statement timeout would)."""
    RUNS["always_cut_off"] += 1
    raise OperationalError("canceling statement due to statement timeout")


@pytest.mark.django_db(transaction=True)  # the worker closes and opens its connection
def test_a_task_the_database_cut_off_runs_again_once_the_database_answers(settings, monkeypatch):
    settings.TASKS = {
        "default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}
    }
    monkeypatch.setattr(ops.database, "FIRST_PAUSE", 0.01)
    monkeypatch.setattr(ops.database, "_process_hold", None)  # run() makes this a worker
    monkeypatch.setattr(ops.worker, "RERUNS_AFTER_OUTAGE", 3)
    monkeypatch.setitem(RUNS, "cut_off_once", 0)
    monkeypatch.setitem(RUNS, "always_cut_off", 0)
    recovers, fails = cut_off_once.enqueue(), always_cut_off.enqueue()
    worker = OutageTolerantWorker(
        name="the test worker", queue_names=["default"], excluded_queue_names=[], interval=0,
        batch=True, backend_name="default", startup_delay=False, max_tasks=None,
        worker_id="test-worker",
    )  # fmt: skip

    worker.run()

    recovered, failed = (DBTaskResult.objects.get(id=r.id) for r in (recovers, fails))
    assert (recovered.status, recovered.return_value) == (TaskResultStatus.SUCCESSFUL, "done")
    assert RUNS["cut_off_once"] == 2  # once cut off, once through
    # A task that meets the same trouble every time is recorded as failed, as before.
    assert failed.status == TaskResultStatus.FAILED
    assert failed.exception_class_path == "django.db.utils.OperationalError"
    assert RUNS["always_cut_off"] == 4  # cut off three times, then recorded
    outage.ended()
