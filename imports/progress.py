"""Where a running import stands: one figure for the bar and the words beside it.

A learner of the file is done once the assessment service has registered them and their
account is ready to sign in (its password hashed, slow on purpose), or once they failed. The
bar, its percentage and the sentence under it all count the same learners, so they agree at
every refresh, from the first row sent to the last account set up.
"""

import math
from dataclasses import dataclass

from django.contrib.humanize.templatetags.humanize import intcomma
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from imports.models import ImportJob


class Phase:
    """The stages of a job the progress page tells apart."""

    PREVIEW = "preview"
    WAITING = "waiting"  # confirmed; no run has started yet
    SENDING = "sending"  # rows still to send; accounts set up beside them
    SIGN_IN = "sign_in"  # every row sent; the last accounts being set up
    FINISHED = "finished"
    DISCARDED = "discarded"


@dataclass(frozen=True)
class ImportProgress:
    """Where a job stands, for the progress page, its JSON and the list of imports."""

    state: str
    started: bool
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
    def phase(self) -> str:
        if self.state != ImportJob.State.RUNNING:
            return {
                ImportJob.State.PREVIEW: Phase.PREVIEW,
                ImportJob.State.FINISHED: Phase.FINISHED,
            }.get(self.state, Phase.DISCARDED)
        if not self.started:
            return Phase.WAITING
        return Phase.SENDING if self.remaining else Phase.SIGN_IN

    @property
    def done(self) -> int:
        """Learners done: registered and ready to sign in, or failed. The bar's value."""
        return self.failed + self.signin_ready

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
        if self.phase not in (Phase.SENDING, Phase.SIGN_IN):
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
    def count_text(self) -> str:
        """The bar's figure in words: "5 of 10 learners done (1 failed)"."""
        figures = {
            "done": intcomma(self.done),
            "total": intcomma(self.to_send),
            "failed": intcomma(self.failed),
        }
        if self.failed:
            return (
                ngettext(
                    "%(done)s of %(total)s learner done (%(failed)s failed)",
                    "%(done)s of %(total)s learners done (%(failed)s failed)",
                    self.to_send,
                )
                % figures
            )
        return (
            ngettext(
                "%(done)s of %(total)s learner done",
                "%(done)s of %(total)s learners done",
                self.to_send,
            )
            % figures
        )

    @property
    def summary(self) -> str:
        """The sentence under the bar: the bar's figure, the time left and what is under way."""
        phase = {
            Phase.WAITING: _("Waiting for the import to start."),
            Phase.SENDING: _(
                "Sending learners to the assessment service and setting up their sign-in."
            ),
            Phase.SIGN_IN: _("Every learner is sent; setting up sign-in for the last ones."),
        }.get(self.phase, "")
        figure = self.count_text
        if self.time_left:
            # Translators: %(count)s is e.g. "5 of 10 learners done"; %(time_left)s is e.g.
            # "about 2 minutes left".
            figure = _("%(count)s, %(time_left)s") % {"count": figure, "time_left": self.time_left}
        if not phase:
            return _("%(count)s.") % {"count": figure}
        # Translators: %(count)s is e.g. "5 of 10 learners done, about 2 minutes left";
        # %(phase)s a sentence saying what the import is doing.
        return _("%(count)s. %(phase)s") % {"count": figure, "phase": phase}

    def as_json(self) -> dict:
        return {
            "state": self.state,
            "phase": self.phase,
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
            "percent_text": self.percent_text,
        }


def progress_of(job: ImportJob, counts: dict[str, int]) -> ImportProgress:
    """Return the job's progress from its rows' counts by outcome, with the time left."""
    return ImportProgress(
        state=job.state,
        started=job.started_at is not None,
        to_send=job.valid_rows,
        registered=counts["registered"],
        failed=counts["failed"],
        remaining=counts["remaining"],
        signin_ready=counts["ready"],
        invalid=counts["invalid"],
        passwords_made=counts["passwords_made"],
        seconds_left=_seconds_left(job, counts),
    )


def _seconds_left(job: ImportJob, counts: dict[str, int]) -> int | None:
    """Estimate the time left from the pace of sending and of setting up sign-in so far."""
    if job.state != ImportJob.State.RUNNING or not job.started_at:
        return None
    elapsed = (timezone.now() - job.started_at).total_seconds()
    sent = counts["registered"] + counts["failed"]
    estimates = []
    if sent and elapsed > 0:
        estimates.append(counts["remaining"] / (sent / elapsed))
    unready = counts["registered"] + counts["remaining"] - counts["ready"]
    if counts["ready"] and elapsed > 0:
        estimates.append(unready / (counts["ready"] / elapsed))
    if estimates:
        return round(max(estimates))
    if not counts["remaining"] and not unready:
        return 0
    return None
