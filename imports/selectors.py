"""Reads of bulk registrations for the pages: a job's progress, its rows, its result file."""

from collections.abc import Iterator
from datetime import timedelta

from django.conf import settings
from django.db.models import Count, Min, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext_lazy

from imports.models import ImportJob, ImportRow
from imports.progress import ImportProgress, progress_of
from ops.health import WorkQueue, waited_seconds
from schools.models import School, several_schools


def _progress_counts() -> dict[str, Count]:
    """Count a job's rows by outcome, as imports.progress reads them."""
    return {
        "registered": Count("pk", filter=Q(state=ImportRow.State.REGISTERED)),
        "failed": Count("pk", filter=Q(state=ImportRow.State.FAILED)),
        "remaining": Count(
            "pk", filter=Q(state__in=[ImportRow.State.QUEUED, ImportRow.State.SENDING])
        ),
        "ready": Count("pk", filter=Q(signin_ready_at__isnull=False)),
        "invalid": Count("pk", filter=Q(state=ImportRow.State.INVALID)),
        "passwords_made": Count(
            "pk", filter=Q(state=ImportRow.State.REGISTERED, password_generated=True)
        ),
    }


def import_progress(job: ImportJob) -> ImportProgress:
    """Count the job's rows by outcome (one query) and estimate the time left."""
    return progress_of(job, ImportRow.objects.filter(job=job).aggregate(**_progress_counts()))


def import_jobs_listed() -> QuerySet[ImportJob]:
    """Return every import, newest first, with who uploaded it."""
    return ImportJob.objects.select_related("created_by").order_by("-created_at", "-id")


def import_progresses(jobs: list[ImportJob]) -> dict[int, ImportProgress]:
    """Return each job's progress by its key, its rows counted in one query."""
    counted = (
        ImportRow.objects.filter(job__in=jobs)
        .order_by()
        .values("job")
        .annotate(**_progress_counts())
    )
    counts = {row.pop("job"): row for row in counted}
    nothing = dict.fromkeys(_progress_counts(), 0)
    return {job.pk: progress_of(job, counts.get(job.pk, nothing)) for job in jobs}


def import_invalid_rows(job: ImportJob) -> QuerySet[ImportRow]:
    """Return the rows skipped as invalid, in file order."""
    return job.rows.filter(state=ImportRow.State.INVALID).order_by("row_number")


def import_failed_rows(job: ImportJob) -> QuerySet[ImportRow]:
    """Return the rows the upstream did not register, in file order."""
    return job.rows.filter(state=ImportRow.State.FAILED).order_by("row_number")


def import_credentials_available(job: ImportJob) -> bool:
    """Return whether the generated passwords can still be downloaded (once)."""
    return (
        job.state == ImportJob.State.FINISHED
        and job.generated_passwords > 0
        and job.credentials_wiped_at is None
        and job.finished_at is not None
        and timezone.now() - job.finished_at < timedelta(seconds=settings.IMPORT_CREDENTIALS_TTL)
    )


RESULT_OUTCOMES = {
    # Translators: The outcome of a row (a learner) of a bulk registration, in its result file.
    ImportRow.State.REGISTERED: gettext_lazy("registered"),
    # Translators: The outcome of a row (a learner) of a bulk registration, in its result file.
    ImportRow.State.FAILED: gettext_lazy("failed"),
    ImportRow.State.INVALID: gettext_lazy("skipped as invalid"),
    ImportRow.State.QUEUED: gettext_lazy("not sent yet"),
    ImportRow.State.SENDING: gettext_lazy("being sent"),
}


def import_result_rows(job: ImportJob) -> Iterator[tuple]:
    """Yield each row's number, username, outcome, reason and upstream user_id, in file order.

    The outcomes are lazy translations, written in the request's language as the file streams
    out (kit.csv_export).
    """
    rows = (
        job.rows.order_by("row_number")
        .values_list(
            "row_number", "username", "state", "reason", "problems", "learner__upstream_user_id"
        )
        .iterator(chunk_size=1000)
    )
    for row_number, username, state, reason, problems, user_id in rows:
        if state == ImportRow.State.INVALID:
            reason = " ".join(problems)
        yield row_number, username, RESULT_OUTCOMES[state], reason, user_id or ""


# A confirmed job: waiting until a run starts it, then running.
_JOB_FIGURES = {
    "waiting": Count("id", filter=Q(started_at__isnull=True)),
    "running": Count("id", filter=Q(started_at__isnull=False)),
    "oldest": Min("confirmed_at", filter=Q(started_at__isnull=True)),
}


def _job_queue(figures: dict, now) -> WorkQueue:
    return WorkQueue(
        waiting=figures["waiting"],
        oldest_waiting_seconds=waited_seconds(figures["oldest"], now),
        running=figures["running"],
    )


def imports_running() -> WorkQueue:
    """Confirmed jobs: those no run has started yet wait, the others are running."""
    figures = ImportJob.objects.filter(state=ImportJob.State.RUNNING).aggregate(**_JOB_FIGURES)
    return _job_queue(figures, timezone.now())


def imports_running_by_school() -> dict[int, WorkQueue]:
    """Return `imports_running` per school."""
    rows = (
        ImportJob.objects.filter(state=ImportJob.State.RUNNING)
        .values("school_id")
        .annotate(**_JOB_FIGURES)
        .order_by()
    )
    now = timezone.now()
    return {row["school_id"]: _job_queue(row, now) for row in rows}


def import_valid_rows_by_school(job: ImportJob) -> list[tuple[str, int]]:
    """Return how many valid rows go to each school (name, count), by name; [] with one school."""
    if not several_schools():
        return []
    names = {school.pk: school.name for school in School.everyone()}
    counts = (
        ImportRow.objects.filter(job=job)
        .exclude(state=ImportRow.State.INVALID)
        .values("school_id")
        .annotate(rows=Count("pk"))
        .values_list("school_id", "rows")
    )
    return sorted((names.get(school_id or job.school_id, "?"), rows) for school_id, rows in counts)
