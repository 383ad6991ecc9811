"""Applying a roster of one school's new pupils: registered at the bulk import's pace?

A roster of `pupils` pupils new to the portal (tests.roster_files.school_spec, a class of 30
each with its teacher) goes through roster.services.roster_sync_start as the command sends it.
Applying it queues one import job of a row per pupil; IMPORT_WORKERS imports workers send
them, one task per row, as in the `import` part (bench.bulk.imports_workers). From the sync's
start (its RosterSync made): the last row's upstream outcome, against the import part's ideal
(rows x the create latency / workers), and the last password hashed. The sync's preview is
timed too. What it registered is deleted afterwards, as bench.bulk does.
"""

import time
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.db.models import Max

from bench.bulk import TARGET_FACTOR, imports_workers
from bench.roster import APPLY_SCHOOL_CODE, RUN_TIMEOUT, Row
from bench.roster_store import roster_clear

CLASS_SIZE = 30


@contextmanager
def plan_timed(marks: dict[str, float]):
    """Mark when the sync's plan is made: the service keeps no time for its preview."""
    from roster import services

    planner = services.plan_sync

    def timed(*args, **kwargs):
        plan = planner(*args, **kwargs)
        marks["planned"] = time.perf_counter()
        return plan

    services.plan_sync = timed
    try:
        yield
    finally:
        services.plan_sync = planner


def apply_rows(folder: Path, *, pupils: int, latency_ms: int) -> list[Row]:
    """Sync a roster of `pupils` new pupils of one school; return the table rows."""
    from imports.models import ImportJob
    from roster.joining import sync_import_jobs
    from roster.models import RosterSync
    from roster.services import roster_sync_start
    from schools.services import school_add
    from tests.roster_files import roster_write, school_spec

    run = time.strftime("%Y%m%d%H%M%S")
    school_add(code=APPLY_SCHOOL_CODE, name="Bench roster school")
    spec = school_spec(code=APPLY_SCHOOL_CODE, org=f"bench-org-{run}", pupils=pupils,
                       classes=max(1, pupils // CLASS_SIZE), grade="08", year_of_birth=2013,
                       prefix=f"bench{run}")  # fmt: skip
    path = roster_write(spec, folder / f"school-{run}", version="1.2", as_zip=True)
    workers = max(1, settings.IMPORT_WORKERS)
    marks: dict[str, float] = {}
    with imports_workers(workers):
        with plan_timed(marks):
            called = time.perf_counter()
            sync = roster_sync_start(source=path, origin=RosterSync.Origin.COMMAND)
            returned = time.perf_counter()
        jobs = sync_import_jobs(sync)
        deadline = time.monotonic() + RUN_TIMEOUT
        while jobs.filter(state=ImportJob.State.RUNNING).exists():
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
    job = jobs.first()
    if sync.state != RosterSync.State.APPLIED or job is None:
        why = sync.error or f"{sync.get_state_display()}, {sync.joined} joining"
        print(f"Roster: {roster_clear()}")
        return [("roster sync: applying new pupils", f"not applied: {why}", "", "FAIL")]
    rows = job.rows.all()
    times = rows.aggregate(upstream=Max("finished_at"), ready=Max("signin_ready_at"))
    registered = rows.filter(state="registered").count()
    count = rows.count()
    start = sync.created_at
    upstream = _seconds(start, times["upstream"])
    ready = _seconds(start, times["ready"])
    finished = _seconds(start, job.finished_at)
    picked_up = _seconds(job.confirmed_at, job.started_at)
    preview = marks.get("planned", returned) - called
    print(f"Roster: {_cleanup()}")
    ideal = count * latency_ms / 1000 / workers
    if upstream is None:
        return [("roster sync: applying new pupils", "no row was sent", "", "FAIL")]
    within = upstream <= TARGET_FACTOR * ideal and registered == pupils
    return [
        (
            f"roster sync of {pupils:,} new pupils, {latency_ms} ms latency, {workers} imports"
            " workers: sync's start to upstream registration",
            f"{upstream:.1f} s = {upstream / ideal:.2f}x ideal {ideal:.1f} s"
            f" ({registered:,} registered)",
            f"<= {TARGET_FACTOR:g}x ideal",
            "PASS" if within else "FAIL",
        ),
        (
            "roster sync: preview (read + plan); applied (rows queued); sign-in ready;"
            " job finished; run picked up",
            f"{preview:.1f} s; {returned - called:.1f} s; {_figure(ready)}; {_figure(finished)};"
            f" {_figure(picked_up)} after queueing",
            "",
            "" if finished is not None else "FAIL",
        ),
    ]


def _cleanup() -> str:
    """Delete what the sync made (learners, groups, accounts, links) and the finished tasks."""
    from django_tasks_db.models import DBTaskResult

    try:
        cleared = roster_clear()
        DBTaskResult.objects.filter(queue_name="imports").finished().delete()
        return cleared
    except Exception as error:  # noqa: BLE001 - the figures are measured; say why they stay
        return f"could not delete the sync's learners: {error}"


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    return (end - start).total_seconds() if start is not None and end is not None else None


def _figure(seconds: float | None) -> str:
    return f"{seconds:.1f} s" if seconds is not None else "n/a"
