"""Reads of learners shared by staff pages."""

from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db.models import OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Concat
from django.utils import timezone

from assessments.models import AssessmentAttempt, AssessmentResult
from learners.models import Learner

# Matches the partial indexes on Learner (learner_active_name_idx and its level variant).
LEARNER_LIST_ORDER = ("last_name", "first_name", "username")
# The shortest word the trigram indexes of the search can find (learners migration 0004).
TRIGRAM = 3


def learner_list(*, query: str = "", level: str = "") -> QuerySet[Learner]:
    """Return registered learners matching a search and level, with their latest attempt."""
    return _with_latest_attempt(learner_matching(query=query, level=level))


def learner_matching(*, query: str = "", level: str = "") -> QuerySet[Learner]:
    """Return registered learners matching a search and level, in list order, nothing joined."""
    learners = Learner.objects.filter(status=Learner.Status.ACTIVE)
    for word in query.split()[:5]:
        # Every word must match somewhere, so "Amira Khan" finds Amira Khan.
        learners = learners.filter(
            Q(username__icontains=word)
            | Q(first_name__icontains=word)
            | Q(last_name__icontains=word)
            | Q(email__icontains=word)
        )
    if level:
        learners = learners.filter(level=level)
    if any(len(word) >= TRIGRAM for word in query.split()[:5]):
        # PostgreSQL would walk the name index and filter, expecting matches spread evenly;
        # "Khan" sits mid-alphabet, so it read 40,000 rows first (107 ms). An order the index
        # cannot give makes it take the matches from the trigram indexes and sort them. Words
        # too short for a trigram match densely: walking the index finds a page at once.
        return learners.order_by(Concat("last_name", Value("")), *LEARNER_LIST_ORDER[1:])
    return learners.order_by(*LEARNER_LIST_ORDER)


def learner_rows(learners: QuerySet[Learner]) -> QuerySet[Learner]:
    """Return a slice of `learner_matching` (a page) with each learner's latest attempt."""
    # The latest-attempt subqueries run for the page's rows only: over the whole list, a deep
    # page would run them for every row it skips (page 2000 took 900 ms at 100,000 learners).
    page = Learner.objects.filter(pk__in=learners.values("pk"))
    return _with_latest_attempt(page).order_by(*LEARNER_LIST_ORDER)


def _with_latest_attempt(learners: QuerySet[Learner]) -> QuerySet[Learner]:
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


def learner_attempts(learner: Learner) -> list[AssessmentAttempt]:
    """Return a learner's attempts, newest first, with results and focus areas loaded."""
    return list(learner.attempts.select_related("result").prefetch_related("result__focus_areas"))


def latest_result(attempts: list[AssessmentAttempt]) -> AssessmentResult | None:
    """Return the results of the newest completed attempt among `learner_attempts`."""
    completed = (a for a in attempts if a.state == AssessmentAttempt.State.COMPLETED)
    return next((a.result for a in completed), None)


# A registration still pending after this long was cut off (the process died mid-call).
PENDING_REGISTRATION_STALE_AFTER = timedelta(minutes=10)


def stale_pending_registrations(username: str) -> QuerySet[Learner]:
    """Return pending registrations of this username left behind by a dead process."""
    cutoff = timezone.now() - PENDING_REGISTRATION_STALE_AFTER
    return Learner.objects.filter(
        username__iexact=username, status=Learner.Status.PENDING, registered_at__lt=cutoff
    )


def username_taken(username: str) -> bool:
    """Return whether a sign-in account already uses this username, in any case."""
    stale = stale_pending_registrations(username).values("user_id")
    return get_user_model().objects.filter(username__iexact=username).exclude(pk__in=stale).exists()


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
