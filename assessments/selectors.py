"""Reads of assessment attempts and results shared by staff pages about learners."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import (
    BooleanField,
    Case,
    Count,
    Exists,
    IntegerField,
    Min,
    OuterRef,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Lower, Trim
from django.utils import timezone

from assessments.models import RISK_LEVELS, AssessmentAttempt, AssessmentResult, FocusArea
from ops.health import WorkQueue, waited_seconds

if TYPE_CHECKING:  # annotations only: the learners app sits above this one and imports it
    from learners.models import Learner


def with_latest_attempt(learners: QuerySet[Learner]) -> QuerySet[Learner]:
    """Annotate the latest attempt's state and the latest results' risk level."""
    latest = AssessmentAttempt.objects.filter(learner=OuterRef("pk")).order_by("-offered_at", "-id")
    # The latest results stay visible while a newer assessment is under way.
    latest_result = AssessmentResult.objects.filter(attempt__learner=OuterRef("pk")).order_by(
        "-received_at", "-id"
    )
    return learners.annotate(
        latest_state=Subquery(latest.values("state")[:1]),
        latest_risk_level=Subquery(latest_result.values("risk_level")[:1]),
    )


def with_latest_result(learners: QuerySet[Learner]) -> QuerySet[Learner]:
    """Annotate what the latest results say: when they came, the risk's rank, needs help.

    The latest results are those `with_latest_attempt` shows. `latest_risk_rank` is
    `risk_rank` of their RiskLevel (0 for a label not known), `latest_needs_help` whether a
    focus area needs help (`needs_help_flagged`); each is None for a learner without results.
    """
    latest_result = AssessmentResult.objects.filter(attempt__learner=OuterRef("pk")).order_by(
        "-received_at", "-id"
    )
    # Worked out inside each subquery, on the one latest row: a condition on an annotation
    # outside would repeat the subquery once per label.
    ranked = latest_result.annotate(label=Lower(Trim("risk_level"))).annotate(
        rank=Case(
            *(When(label=label, then=Value(rank)) for label, rank in RISK_LEVELS.items()),
            default=Value(0),
            output_field=IntegerField(),
        )
    )
    flagged = (
        FocusArea.objects.filter(result=OuterRef("pk"))
        .annotate(answer=Lower(Trim("needs_help")))
        .exclude(answer="no")
    )
    return with_latest_attempt(learners).annotate(
        latest_result_at=Subquery(latest_result.values("received_at")[:1]),
        latest_risk_rank=Subquery(ranked.values("rank")[:1]),
        latest_needs_help=Subquery(
            latest_result.annotate(flagged=Exists(flagged)).values("flagged")[:1],
            output_field=BooleanField(),
        ),
    )


def learner_attempts(learner: Learner) -> list[AssessmentAttempt]:
    """Return a learner's attempts, newest first, with results and focus areas loaded."""
    return list(learner.attempts.select_related("result").prefetch_related("result__focus_areas"))


def latest_result(attempts: list[AssessmentAttempt]) -> AssessmentResult | None:
    """Return the results of the newest completed attempt among `learner_attempts`."""
    completed = (a for a in attempts if a.state == AssessmentAttempt.State.COMPLETED)
    return next((a.result for a in completed), None)


@dataclass(frozen=True)
class FocusAreaChanges:
    """How the focus areas needing help moved between two results, by area name."""

    newly_needs_help: list[str]
    no_longer_needs_help: list[str]
    still_needs_help: list[str]
    still_fine: list[str]
    only_in_latest: list[str]
    only_in_earlier: list[str]


def completed_attempts(attempts: list[AssessmentAttempt]) -> list[AssessmentAttempt]:
    """Return the completed attempts with results among `learner_attempts`, oldest first."""
    done = [a for a in attempts if a.state == AssessmentAttempt.State.COMPLETED]
    done = [a for a in done if getattr(a, "result", None) is not None]
    return sorted(done, key=lambda a: (a.completed_at or a.offered_at, a.pk))


# The chart shows the latest few; the table beside it lists every one.
TREND_POINTS = 6


@dataclass(frozen=True)
class ScoreTrend:
    """A learner's completed attempts, the latest few to chart, and the last change in areas."""

    completed: list[AssessmentAttempt]
    charted: list[AssessmentAttempt]
    area_changes: FocusAreaChanges | None


def score_trend(attempts: list[AssessmentAttempt]) -> ScoreTrend:
    """Return the trend of LOA scores among `learner_attempts` (nothing to chart below two)."""
    completed = completed_attempts(attempts)
    if len(completed) < 2:
        return ScoreTrend(completed=completed, charted=[], area_changes=None)
    return ScoreTrend(
        completed=completed,
        charted=completed[-TREND_POINTS:],
        area_changes=focus_area_changes(completed[-2].result, completed[-1].result),
    )


def focus_area_changes(earlier: AssessmentResult, latest: AssessmentResult) -> FocusAreaChanges:
    """Compare two results' focus areas by name (with focus areas prefetched)."""
    before = {area.name: area.needs_help_flagged for area in earlier.focus_areas.all()}
    after = {area.name: area.needs_help_flagged for area in latest.focus_areas.all()}
    both = [name for name in after if name in before]
    return FocusAreaChanges(
        newly_needs_help=[n for n in both if after[n] and not before[n]],
        no_longer_needs_help=[n for n in both if before[n] and not after[n]],
        still_needs_help=[n for n in both if before[n] and after[n]],
        still_fine=[n for n in both if not before[n] and not after[n]],
        only_in_latest=[n for n in after if n not in before],
        only_in_earlier=[n for n in before if n not in after],
    )


def _waiting_since(states: tuple[str, ...]) -> WorkQueue:
    """Count the attempts in `states` and how long the oldest has waited since it was sent."""
    # Answered by attempt_unfinished_idx alone (state and submitted_at are in it).
    figures = AssessmentAttempt.objects.filter(state__in=states).aggregate(
        waiting=Count("id"), oldest=Min("submitted_at")
    )
    age = waited_seconds(figures["oldest"], timezone.now())
    return WorkQueue(waiting=figures["waiting"], oldest_waiting_seconds=age)


def _waiting_by_school(states: tuple[str, ...]) -> dict[int, WorkQueue]:
    """Return `_waiting_since` for each school whose learners have attempts in `states`."""
    rows = (
        AssessmentAttempt.objects.filter(state__in=states)
        .values("learner__school_id")
        .annotate(waiting=Count("id"), oldest=Min("submitted_at"))
        .order_by()
    )
    now = timezone.now()
    return {
        row["learner__school_id"]: WorkQueue(
            waiting=row["waiting"], oldest_waiting_seconds=waited_seconds(row["oldest"], now)
        )
        for row in rows
    }


DELIVERY_STATES = (AssessmentAttempt.State.SUBMITTING, AssessmentAttempt.State.SUBMIT_PENDING)
RESULT_STATES = (AssessmentAttempt.State.SUBMITTED,)


def deliveries_waiting() -> WorkQueue:
    """Submissions not yet accepted by the upstream (being sent, or waiting to be sent again)."""
    return _waiting_since(DELIVERY_STATES)


def deliveries_waiting_by_school() -> dict[int, WorkQueue]:
    """Return `deliveries_waiting` per school."""
    return _waiting_by_school(DELIVERY_STATES)


def results_waiting() -> WorkQueue:
    """Submissions the upstream accepted whose results have not been stored yet."""
    return _waiting_since(RESULT_STATES)


def results_waiting_by_school() -> dict[int, WorkQueue]:
    """Return `results_waiting` per school."""
    return _waiting_by_school(RESULT_STATES)
