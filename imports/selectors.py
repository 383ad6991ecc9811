"""Reads of bulk registrations for the pages: a job's progress, its rows, its result file."""

import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.humanize.templatetags.humanize import intcomma
from django.db.models import Count, Min, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from imports.models import ImportJob, ImportRow
from portal.health import WorkQueue


@dataclass(frozen=True)
class ImportProgress:
    """Where a job stands, for the progress page and its JSON."""

    state: str
    to_send: int
    registered: int
    failed: int
    remaining: int
    signin_ready: int
    invalid: int
    # Registered rows whose password the portal generated (what the download holds).
    passwords_made: int
    seconds_left: int | None

    @property
    def finished(self) -> bool:
        return self.state == ImportJob.State.FINISHED

    @property
    def done(self) -> int:
        """Rows the upstream has dealt with, one way or the other."""
        return self.registered + self.failed

    @property
    def percent(self) -> int:
        if not self.to_send:
            return 100
        return math.floor(100 * self.done / self.to_send)

    @property
    def percent_text(self) -> str:
        # Translators: How much of an import is done, as a percentage, e.g. "50%".
        return _("%(percent)s%%") % {"percent": self.percent}

    @property
    def time_left(self) -> str:
        if self.finished:
            return ""
        if self.seconds_left is None:
            return _("estimating the time left")
        if self.seconds_left < 60:
            return _("less than a minute left")
        minutes = math.ceil(self.seconds_left / 60)
        return ngettext(
            "about %(minutes)s minute left", "about %(minutes)s minutes left", minutes
        ) % {"minutes": intcomma(minutes)}

    @property
    def summary(self) -> str:
        figures = {
            "registered": intcomma(self.registered),
            "failed": intcomma(self.failed),
            "remaining": intcomma(self.remaining),
            "ready": intcomma(self.signin_ready),
            "time_left": self.time_left,
        }
        if not self.finished and not self.remaining and self.signin_ready < self.registered:
            # Every row is sent; local password hashing (slow on purpose) finishes the job.
            if figures["time_left"]:
                # Translators: %(time_left)s is e.g. "about 2 minutes left" or "less than a
                # minute left".
                text = ngettext(
                    "All rows sent: registered %(registered)s, failed %(failed)s. Setting up "
                    "sign-in: %(ready)s of %(registered)s account ready, %(time_left)s.",
                    "All rows sent: registered %(registered)s, failed %(failed)s. Setting up "
                    "sign-in: %(ready)s of %(registered)s accounts ready, %(time_left)s.",
                    self.registered,
                )
            else:
                text = ngettext(
                    "All rows sent: registered %(registered)s, failed %(failed)s. Setting up "
                    "sign-in: %(ready)s of %(registered)s account ready.",
                    "All rows sent: registered %(registered)s, failed %(failed)s. Setting up "
                    "sign-in: %(ready)s of %(registered)s accounts ready.",
                    self.registered,
                )
        elif figures["time_left"]:
            # Translators: Rows of an import: registered, failed, still to send. %(time_left)s
            # is e.g. "about 2 minutes left" or "less than a minute left".
            text = _(
                "Done %(registered)s, failed %(failed)s, remaining %(remaining)s, %(time_left)s."
            )
        else:
            # Translators: Rows of an import: registered, failed, still to send.
            text = _("Done %(registered)s, failed %(failed)s, remaining %(remaining)s.")
        return text % figures

    @property
    def signin_summary(self) -> str:
        return _("Accounts ready to sign in: %(ready)s of %(total)s.") % {
            "ready": intcomma(self.signin_ready),
            "total": intcomma(self.to_send),
        }

    def as_json(self) -> dict:
        return {
            "state": self.state,
            "finished": self.finished,
            "to_send": self.to_send,
            "done": self.done,
            "registered": self.registered,
            "failed": self.failed,
            "remaining": self.remaining,
            "signin_ready": self.signin_ready,
            "percent": self.percent,
            "seconds_left": self.seconds_left,
            # Text shown as it is, in the language of the request.
            "summary": self.summary,
            "signin_summary": self.signin_summary,
            "percent_text": self.percent_text,
        }


def import_progress(job: ImportJob) -> ImportProgress:
    """Count the job's rows by outcome (one query) and estimate the time left."""
    counts = ImportRow.objects.filter(job=job).aggregate(
        registered=Count("pk", filter=Q(state=ImportRow.State.REGISTERED)),
        failed=Count("pk", filter=Q(state=ImportRow.State.FAILED)),
        remaining=Count(
            "pk", filter=Q(state__in=[ImportRow.State.QUEUED, ImportRow.State.SENDING])
        ),
        ready=Count("pk", filter=Q(signin_ready_at__isnull=False)),
        invalid=Count("pk", filter=Q(state=ImportRow.State.INVALID)),
        passwords_made=Count(
            "pk", filter=Q(state=ImportRow.State.REGISTERED, password_generated=True)
        ),
    )
    seconds_left = None
    if job.state == ImportJob.State.RUNNING and job.started_at:
        elapsed = (timezone.now() - job.started_at).total_seconds()
        sent = counts["registered"] + counts["failed"]
        estimates = []
        if sent and elapsed > 0:
            estimates.append(counts["remaining"] / (sent / elapsed))
        unready = counts["registered"] + counts["remaining"] - counts["ready"]
        if counts["ready"] and elapsed > 0:
            estimates.append(unready / (counts["ready"] / elapsed))
        if estimates:
            seconds_left = round(max(estimates))
        elif not counts["remaining"] and not unready:
            seconds_left = 0
    return ImportProgress(
        state=job.state,
        to_send=job.valid_rows,
        registered=counts["registered"],
        failed=counts["failed"],
        remaining=counts["remaining"],
        signin_ready=counts["ready"],
        invalid=counts["invalid"],
        passwords_made=counts["passwords_made"],
        seconds_left=seconds_left,
    )


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
    out (portal.csv_export).
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


def imports_running() -> WorkQueue:
    """Confirmed jobs: those no run has started yet wait, the others are running."""
    figures = ImportJob.objects.filter(state=ImportJob.State.RUNNING).aggregate(
        waiting=Count("id", filter=Q(started_at__isnull=True)),
        running=Count("id", filter=Q(started_at__isnull=False)),
        oldest=Min("confirmed_at", filter=Q(started_at__isnull=True)),
    )
    oldest = figures["oldest"]
    age = max((timezone.now() - oldest).total_seconds(), 0.0) if oldest else None
    return WorkQueue(
        waiting=figures["waiting"], oldest_waiting_seconds=age, running=figures["running"]
    )
