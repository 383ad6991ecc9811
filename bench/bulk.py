"""Bulk registration of 1,000 rows against the sandbox with 50 ms added on create-learner.

The file goes through the same services as the upload page (imports.services): create from
CSV (which queues the hashing of its passwords), then confirm, which queues the run on the
`imports` queue; IMPORT_WORKERS `db_worker` processes, started before the upload, take it
from there, one task per row, as `manage.py serve` runs them. It runs twice: confirmed once
the preview's passwords are hashed (staff reading the preview meanwhile), and confirmed the
moment the file is checked. The recorded times give the figures, from the job's start (its
run picked up by a worker): upstream registration (last row's upstream outcome), sign-in
ready (last row's account open with its hash) and the job finished; and how long the run
waited to be picked up. The learners it registers are deleted afterwards, so the cohort stays
as generated.
"""

import io
import os
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from datetime import date, datetime
from pathlib import Path

from django.conf import settings
from django.db.models import Max
from django.utils import timezone

from bench.lists import staff_client

ROOT = Path(__file__).resolve().parent.parent
TARGET_FACTOR = 1.5
ROWS = 1000
WORKER_START_TIMEOUT = 120  # seconds: a loaded machine starts Django slowly
RUN_TIMEOUT = 3600  # seconds: hashing 1,000 passwords on a busy 2-core machine takes minutes


def csv_file(rows: int, run: str) -> io.BytesIO:
    """Return an upload with `rows` valid rows and no passwords (the portal makes them)."""
    lines = ["username,dob,first_name,last_name,level"]
    for number in range(rows):
        lines.append(
            f"bench.{run}.{number:05d},{date(2010, 1 + number % 12, 1 + number % 28)},"
            f"Bench,Row{number},LOA_PARTNER_LEVEL{1 + number % 3}"
        )
    file = io.BytesIO(("\n".join(lines) + "\n").encode())
    file.name = f"bench-{run}.csv"
    return file


@contextmanager
def imports_workers(count: int):
    """Run `count` imports workers as `manage.py serve` does, ready to take tasks; stop them."""
    with ExitStack() as stack:
        logs = []
        for number in range(count):
            log = stack.enter_context(
                tempfile.NamedTemporaryFile("w+b", prefix=f"bench-imports-{number}-")
            )
            process = subprocess.Popen(  # noqa: S603 (our own command line)
                [sys.executable, "manage.py", "db_worker", "--no-reload"]
                + ["--queue-name", "imports"],
                cwd=ROOT,
                env=os.environ,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            stack.callback(_stop, process)
            logs.append(Path(log.name))
        # Started when each says so: the run is timed from a worker taking it, not from boot.
        deadline = time.monotonic() + WORKER_START_TIMEOUT
        while not all(b"Starting worker" in path.read_bytes() for path in logs):
            if time.monotonic() > deadline:
                raise RuntimeError("the imports workers did not start in time")
            time.sleep(0.1)
        yield


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _cleanup(job) -> None:
    """Delete what the run registered locally (the sandbox keeps its copy in memory only)."""
    from django.contrib.auth import get_user_model
    from django_tasks_db.models import DBTaskResult

    from learners.models import Learner

    usernames = list(job.rows.values_list("username", flat=True))
    learners = Learner.objects.filter(username__in=usernames)
    user_ids = list(learners.values_list("user_id", flat=True))
    try:
        job.delete()
        learners.delete()
        get_user_model().objects.filter(pk__in=user_ids).delete()
        DBTaskResult.objects.filter(queue_name="imports").finished().delete()
    except Exception as error:  # noqa: BLE001 - the figures are measured; say why they stay
        print(f"  (could not delete the bench import's learners: {error})")


def rows(*, latency_ms: int, count: int = ROWS) -> list[tuple[str, str, str, str]]:
    """Register `count` rows through the import services, twice, and return the table rows.

    First as staff usually do: the preview read while its passwords are hashed, confirmed
    once they are; then confirmed the moment the file is checked.
    """
    try:
        from imports.services import import_job_confirm, import_job_create_from_csv  # noqa: F401
    except ImportError as error:
        return [("bulk registration", f"MISSING: {error}", "", "FAIL")]

    staff_client()  # makes sure the bench's staff member exists
    user = _staff_user()
    workers = max(1, settings.IMPORT_WORKERS)
    ideal = count * latency_ms / 1000 / workers
    with imports_workers(workers):
        read = _registration(user, count, read_preview=True)
        at_once = _registration(user, count, read_preview=False)
    if read["upstream"] is None or at_once["upstream"] is None:
        return [("bulk registration", "no row was sent", "", "FAIL")]
    within = TARGET_FACTOR * ideal
    title = f"bulk registration {count:,} rows, {latency_ms} ms latency, {workers} imports workers"
    return [
        (
            f"{title}, confirmed once the preview's passwords were hashed: upstream registration",
            f"{_ratio(read['upstream'], ideal)} ({read['registered']:,} registered)",
            f"<= {TARGET_FACTOR:g}x ideal",
            "PASS" if read["upstream"] <= within and read["registered"] == count else "FAIL",
        ),
        (
            "bulk registration, confirmed once hashed: sign-in ready (every account open)",
            _ratio(read["ready"], ideal),
            f"<= {TARGET_FACTOR:g}x ideal",
            "PASS" if read["ready"] is not None and read["ready"] <= within else "FAIL",
        ),
        (
            "bulk registration, the preview: file checked; its passwords hashed (staff reading)",
            f"{read['checked']:.1f} s; {_figure(read['hashed'])} after the upload",
            "",
            "" if read["hashed"] is not None else "FAIL",
        ),
        (
            "bulk registration, confirmed at once: upstream registration; sign-in ready",
            f"{_ratio(at_once['upstream'], ideal)}; {_ratio(at_once['ready'], ideal)}"
            f" ({at_once['registered']:,} registered)",
            "",
            "" if at_once["registered"] == count else "FAIL",
        ),
        (
            "bulk registration: job finished; run picked up (read preview / at once)",
            f"{_figure(read['finished'])} / {_figure(at_once['finished'])};"
            f" {read['picked_up']:.1f} s / {at_once['picked_up']:.1f} s after confirming",
            "",
            "" if read["finished"] is not None and at_once["finished"] is not None else "FAIL",
        ),
    ]


def _registration(user, count: int, *, read_preview: bool) -> dict:
    """Upload, (read the preview until its passwords are hashed,) confirm, run; the figures."""
    from imports.models import ImportJob, ImportRow
    from imports.services import import_job_confirm, import_job_create_from_csv

    _vacuum()
    run = time.strftime("%Y%m%d%H%M%S") + ("r" if read_preview else "a")
    since = timezone.now()
    uploaded = time.monotonic()
    job = import_job_create_from_csv(file=csv_file(count, run), created_by=user)
    checked = time.monotonic() - uploaded
    if job.valid_rows != count:
        raise RuntimeError(f"the bench file has {job.invalid_rows} invalid rows")
    hashed = None
    if read_preview:
        unhashed = ImportRow.objects.filter(job=job, password_hash="")
        deadline = time.monotonic() + RUN_TIMEOUT
        while unhashed.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        hashed = None if unhashed.exists() else time.monotonic() - uploaded
    import_job_confirm(job=job, confirmed_by=user)
    deadline = time.monotonic() + RUN_TIMEOUT
    while job.state == ImportJob.State.RUNNING and time.monotonic() < deadline:
        time.sleep(0.2)
        job.refresh_from_db()
    times = job.rows.aggregate(upstream=Max("finished_at"), ready=Max("signin_ready_at"))
    started = job.started_at or timezone.now()
    figures = {
        "checked": checked,
        "hashed": hashed,
        "registered": job.rows.filter(state="registered").count(),
        "picked_up": (started - job.confirmed_at).total_seconds(),
        "upstream": _seconds(started, times["upstream"]),
        "ready": _seconds(started, times["ready"]),
        "finished": _seconds(started, job.finished_at),
    }
    _drained(since)  # a preview's hashing tasks left behind find nothing to do; let them end
    _cleanup(job)
    return figures


# The tables a run churns: every row and task is updated several times, then deleted.
CHURNED = (
    "learners_importrow",
    "learners_importjob",
    "learners_learner",
    "auth_user",
    "django_tasks_database_dbtaskresult",
)


def _vacuum() -> None:
    """Vacuum what earlier runs churned, as autovacuum would have between two imports.

    This machine's PostgreSQL runs with autovacuum off: without it, each run leaves tens of
    thousands of dead rows for the next one's queue and row lookups to step over.
    """
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for table in CHURNED:
            cursor.execute(f"VACUUM ANALYZE {connection.ops.quote_name(table)}")


def _drained(since: datetime) -> None:
    """Wait (a while at most) until the tasks queued since then have all run."""
    from django_tasks_db.models import DBTaskResult

    busy = DBTaskResult.objects.filter(
        queue_name="imports", enqueued_at__gte=since, status__in=["READY", "RUNNING"]
    )
    deadline = time.monotonic() + WORKER_START_TIMEOUT
    while busy.exists() and time.monotonic() < deadline:
        time.sleep(0.2)


def _ratio(seconds: float | None, ideal: float) -> str:
    if seconds is None:
        return "n/a"
    return f"{seconds:.1f} s = {seconds / ideal:.2f}x ideal {ideal:.1f} s"


def _seconds(start: datetime, end: datetime | None) -> float | None:
    return (end - start).total_seconds() if end is not None else None


def _figure(seconds: float | None) -> str:
    return f"{seconds:.1f} s" if seconds is not None else "n/a"


def _staff_user():
    from django.contrib.auth import get_user_model

    from bench.lists import STAFF_USERNAME

    return get_user_model().objects.get(username=STAFF_USERNAME)
