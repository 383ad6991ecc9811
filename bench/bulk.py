"""Bulk registration of 1,000 rows against the sandbox with 50 ms added on create-learner.

The file goes through the same services as the upload page (imports.services): create from
CSV, confirm, then `import_job_run` in this process (what the worker runs), timed from its
start. The rows' recorded times give the two figures: upstream registration (last row's
upstream outcome) and sign-in ready (last row's password hashed and account active). The
learners it registers are deleted afterwards, so the cohort stays as generated.
"""

import io
import time
from datetime import date

from django.conf import settings
from django.db.models import Max

from bench.lists import staff_client

TARGET_FACTOR = 1.5
ROWS = 1000


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


def _cleanup(job) -> None:
    """Delete what the run registered locally (the sandbox keeps its copy in memory only)."""
    from django.contrib.auth import get_user_model

    from learners.models import Learner

    usernames = list(job.rows.values_list("username", flat=True))
    learners = Learner.objects.filter(username__in=usernames)
    user_ids = list(learners.values_list("user_id", flat=True))
    try:
        job.delete()
        learners.delete()
        get_user_model().objects.filter(pk__in=user_ids).delete()
    except Exception as error:  # noqa: BLE001 - the figures are measured; say why they stay
        print(f"  (could not delete the bench import's learners: {error})")


def rows(*, latency_ms: int, count: int = ROWS) -> list[tuple[str, str, str, str]]:
    """Register `count` rows through the import services and return the table rows."""
    try:
        from imports.services import (
            import_job_confirm,
            import_job_create_from_csv,
            import_job_run,
        )
    except ImportError as error:
        return [("bulk registration", f"MISSING: {error}", "", "FAIL")]

    staff_client()  # makes sure the bench's staff member exists
    user = _staff_user()
    run = time.strftime("%Y%m%d%H%M%S")
    job = import_job_create_from_csv(file=csv_file(count, run), created_by=user)
    if job.valid_rows != count:
        raise RuntimeError(f"the bench file has {job.invalid_rows} invalid rows")
    import_job_confirm(job=job, confirmed_by=user)
    started = time.perf_counter()
    import_job_run(job_id=job.pk)
    wall = time.perf_counter() - started
    job.refresh_from_db()
    times = job.rows.aggregate(upstream=Max("finished_at"), ready=Max("signin_ready_at"))
    registered = job.rows.filter(state="registered").count()
    concurrency = settings.IMPORT_CONCURRENCY
    ideal = count * latency_ms / 1000 / concurrency
    upstream = (times["upstream"] - job.started_at).total_seconds() if times["upstream"] else wall
    ready = (times["ready"] - job.started_at).total_seconds() if times["ready"] else None
    _cleanup(job)
    return [
        (
            f"bulk registration {count:,} rows, {latency_ms} ms latency, concurrency"
            f" {concurrency}: upstream registration",
            f"{upstream:.1f} s = {upstream / ideal:.2f}x ideal {ideal:.1f} s"
            f" ({registered:,} registered)",
            f"<= {TARGET_FACTOR:g}x ideal",
            "PASS" if upstream <= TARGET_FACTOR * ideal and registered == count else "FAIL",
        ),
        (
            "bulk registration: sign-in ready (passwords hashed); whole run",
            f"{ready:.1f} s; {wall:.1f} s" if ready is not None else f"n/a; {wall:.1f} s",
            "",
            "",
        ),
    ]


def _staff_user():
    from django.contrib.auth import get_user_model

    from bench.lists import STAFF_USERNAME

    return get_user_model().objects.get(username=STAFF_USERNAME)
