"""PostgreSQL may blink: pages say so with a 503, workers wait, upstream answers are kept.

The figure of issue 27: PostgreSQL (a cluster of the test's own) restarts under a running
import while a row's call is out; every row ends registered exactly once, none "outcome
unknown", and every process (the web server, both workers, a sweep) is still running. The
other tests take the database away inside this process.
"""

import http.client
import os
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import psycopg
import pytest
from django.conf import settings
from django.db import OperationalError, connection
from django.test import Client
from django_tasks import TaskResultStatus, task
from django_tasks_db.models import DBTaskResult

import ops.database
import ops.worker
import sandbox.app
from learners.models import Learner
from ops.database import outage
from ops.worker import OutageTolerantWorker
from tests.factories import HEADER, VALID, good_rows
from tests.log_capture import console_output
from tests.postgres_cluster import Cluster, postgres_cluster
from tests.serving import free_port, production_environment
from tests.workers import stop_process

REFUSED = 'connection failed: connection to server at "127.0.0.1", port 5432 failed: refused'
LIMIT = 120  # seconds for any one condition: the machine may be loaded


@pytest.fixture(autouse=True)
def database_answering():
    """Each test starts, and leaves, with the database answering as far as this process knows."""
    outage.since = None
    yield
    outage.since = None


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


# ---- The figure: PostgreSQL restarted under a running import --------------------------------

ROWS = 40
HELD_ROW = 10  # the create-learner call that is out while PostgreSQL stops

# Migrated and given a confirmed import in one process: each process start costs seconds.
SETUP = """
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.files.uploadedfile import SimpleUploadedFile
from imports.services import import_job_confirm, import_job_create_from_csv
call_command("migrate", interactive=False, verbosity=0, skip_checks=True)
head = get_user_model().objects.create_superuser("head", "head@school.example", "unused-pw-91")
with open({path!r}, "rb") as rows:
    upload = SimpleUploadedFile("learners.csv", rows.read(), "text/csv")
job = import_job_confirm(job=import_job_create_from_csv(file=upload, created_by=head),
                         confirmed_by=head)
print(job.pk, job.valid_rows)
"""


class CallGate:
    """Hold the sandbox's n-th create-learner call until released (the call is then out)."""

    def __init__(self, number: int):
        self.number = number
        self.calls = 0
        self.arrived = threading.Event()
        self.release = threading.Event()
        self.real = sandbox.app.ENDPOINT_HANDLERS["create-learner"]

    def __enter__(self) -> "CallGate":
        return self

    def __exit__(self, *exc_info) -> None:
        self.release.set()  # never leave the sandbox's thread waiting, whatever happened

    def __call__(self, state, environ, **params):
        self.calls += 1
        if self.calls == self.number:
            self.arrived.set()
            self.release.wait(LIMIT)
        return self.real(state, environ, **params)


def wait_until(condition, what: str, *processes) -> None:
    deadline = time.monotonic() + LIMIT
    while not condition():
        if time.monotonic() > deadline:
            outputs = "\n".join(process.output() for process in processes)
            pytest.fail(f"Timed out waiting for {what}\n{outputs}")
        time.sleep(0.1)


def wait_for_line(process: "PortalProcess", line: str) -> None:
    wait_until(
        lambda: line in process.output(100_000), f"{line!r} from the {process.name}", process
    )


def process_environment(cluster: Cluster, **extra: str) -> dict[str, str]:
    """Return the settings of a portal process on the cluster's database."""
    return {
        "DATABASE_URL": cluster.url("portal"),
        "DJANGO_SETTINGS_MODULE": "tests.process_settings",
        "LOG_DIRECTORY": str(cluster.directory),
        **extra,
    }


def manage(cluster: Cluster, *args: str) -> str:
    """Run a management command on the cluster's database; return what it printed."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=settings.BASE_DIR,
        env={**os.environ, **process_environment(cluster)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


def query(cluster: Cluster, sql: str, *params) -> list[tuple]:
    with psycopg.connect(cluster.url("portal"), connect_timeout=10) as db:
        return db.execute(sql, params).fetchall()


@dataclass
class PortalProcess:
    """A process of the portal on the cluster's database, and where its output goes."""

    name: str
    process: subprocess.Popen
    log_path: Path
    port: int = 0

    def output(self, last: int = 3000) -> str:
        status = self.process.poll()
        text = self.log_path.read_text(errors="replace")[-last:]
        return f"[{self.name} {'running' if status is None else f'exited {status}'}]\n{text}"

    def sign_in_page(self) -> tuple[int, str, str]:
        """GET the sign-in page as the TLS proxy sends it; return status, Retry-After, text."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request("GET", "/accounts/login/", headers={"X-Forwarded-Proto": "https"})
            reply = conn.getresponse()
            return reply.status, reply.getheader("Retry-After", ""), reply.read().decode()
        except OSError:
            return 0, "", ""
        finally:
            conn.close()


@contextmanager
def portal_process(name: str, args: list[str], env: dict[str, str], port: int = 0):
    """Run `manage.py <args>` in the background until the block ends."""
    log_path = Path(env["LOG_DIRECTORY"]) / f"{name.replace(' ', '-')}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "manage.py", *args],
            cwd=settings.BASE_DIR,
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        yield PortalProcess(name, process, log_path, port)
    finally:
        stop_process(process)


def web_server(cluster: Cluster):
    """Run the web server with production settings: one thread, its connection kept."""
    port = free_port()
    env = {
        **production_environment(cluster.url("portal"), cluster.directory / "static"),
        **process_environment(cluster),
        # As production: a connection kept between requests (CONN_HEALTH_CHECKS on).
        "DATABASE_URL": cluster.url("portal", conn_max_age="600"),
        "UPSTREAM_HEALTH_CACHE_SECONDS": "0",  # the sign-in page reads the database each time
    }
    args = ["runserver", "--noreload", "--nothreading", "--skip-checks", f"127.0.0.1:{port}"]
    return portal_process("web server", args, env, port)


ROWS_AND_LEARNERS = """
SELECT r.username, r.state, r.reason, l.status, l.upstream_user_id
FROM learners_importrow r LEFT JOIN learners_learner l ON l.id = r.learner_id
WHERE r.job_id = %s
"""


GONE, BACK = "The database does not answer", "The database answers again"


@pytest.mark.postgres_cluster
def test_an_import_outlasts_a_postgresql_restart_registering_every_row_once(
    upstream, monkeypatch, tmp_path
):
    gate = CallGate(HELD_ROW)
    monkeypatch.setitem(sandbox.app.ENDPOINT_HANDLERS, "create-learner", gate)
    (tmp_path / "rows.csv").write_text(HEADER + "\n" + good_rows(ROWS))

    with postgres_cluster() as cluster, gate:
        cluster.create_database("portal")
        setup = SETUP.format(path=str(tmp_path / "rows.csv"))
        job_id, valid = map(int, manage(cluster, "shell", "--no-imports", "-c", setup).split())
        assert valid == ROWS
        env = process_environment(
            cluster,
            PARTNER_API_BASE_URL=upstream.base_url,
            PARTNER_API_KEY=settings.PARTNER_API_KEY,
            PARTNER_API_TIMEOUT="3.05,90",
        )
        worker = ["db_worker", "--no-reload", "--no-startup-delay", "--interval", "0.2"]
        with (
            web_server(cluster) as web,
            portal_process("imports worker", [*worker, "--queue-name", "imports"], env) as importer,
            portal_process("delivery worker", worker, env) as delivery,  # idle: polling
            portal_process("sweep", ["sweep_imports", "--every", "1"], env) as sweep,
        ):
            everyone = (web, importer, delivery, sweep)
            wait_until(lambda: web.sign_in_page()[0] == 200, "the web server", web)
            wait_until(gate.arrived.is_set, f"create-learner call {HELD_ROW} out", importer)

            cluster.stop()  # while that call is out: its answer comes back to no database
            status, retry_after, text = web.sign_in_page()
            assert (status, retry_after) == (503, "10"), text[:2000] + web.output()
            assert "The portal is briefly unavailable" in text
            gate.release.set()
            for process, line in [(importer, "Holding import row"), (delivery, GONE),
                                  (sweep, GONE)]:  # fmt: skip
                wait_for_line(process, line)
            cluster.start()

            assert web.sign_in_page()[0] == 200, web.output()  # its broken connection is gone
            finished = [("finished",)]
            wait_until(
                lambda: query(cluster, "SELECT state FROM learners_importjob WHERE id = %s",
                              job_id) == finished,
                "the import to finish", importer,
            )  # fmt: skip
            rows = query(cluster, ROWS_AND_LEARNERS, job_id)
            for process in (importer, delivery, sweep):
                wait_for_line(process, BACK)
            for process in everyone:
                assert process.process.poll() is None, process.output()  # still running
            held = importer.output(100_000)

    assert "held through the database's absence" in held
    upstream_ids = {
        learner.username: learner.user_id for learner in upstream.state.learners.values()
    }
    assert sorted(upstream_ids) == sorted(f"pupil{n}" for n in range(ROWS))
    assert upstream.state.count(endpoint="create-learner") == ROWS  # none sent twice
    assert len(rows) == ROWS
    for username, state, reason, status, user_id in rows:
        assert (state, reason, status) == ("registered", "", "active"), (username, reason)
        assert user_id == upstream_ids[username]
