"""Reads for the cohort dashboard: a fixed few aggregate queries, whatever the data size."""

from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db.models import Count, Q, QuerySet

from assessments.models import RISK_LEVELS, AssessmentAttempt, AssessmentResult
from classes.models import SchoolGroup
from dashboard.models import LATEST, CohortNeedsHelp, CohortResult
from learners.models import Learner

State = AssessmentAttempt.State

# Erased learners keep an anonymous record precisely so that they still count (privacy.py).
COUNTED_STATUSES = (Learner.Status.ACTIVE, Learner.Status.ERASED)
PENDING_DELIVERY_STATES = (State.SUBMITTING, State.SUBMIT_PENDING, State.SUBMITTED)

# Known RiskLevel labels, most worrying first (assessments.models.RISK_LEVELS); any other value
# the upstream sends follows, alphabetically, as given (docs/partner-api.md).
RISK_ORDER = tuple(RISK_LEVELS)


@dataclass(frozen=True)
class CohortFilters:
    """Level and a half-open time window [start, end) applied to each figure's own event.

    `learners_in` (ids of learners, a subquery) limits every figure to the learners a member of
    staff sees (learners.access.learner_scope), and to a chosen `group`'s learners (the views
    put both in it); None counts the whole school. `school_ids`
    limits them to these schools' learners (None: every school), which PostgreSQL reads from
    indexes that start with the school, where a list of the school's learners' ids would
    make it join every row.
    """

    level: str = ""
    group: SchoolGroup | None = None  # one the viewer sees (classes.filters)
    start: datetime | None = None
    end: datetime | None = None
    learners_in: QuerySet | None = field(default=None, compare=False)
    school_ids: list[int] | None = field(default=None, compare=False)

    def window(self, field: str) -> Q:
        """Return the condition that `field` falls inside the window (empty when unbounded)."""
        condition = Q()
        if self.start is not None:
            condition &= Q(**{f"{field}__gte": self.start})
        if self.end is not None:
            condition &= Q(**{f"{field}__lt": self.end})
        return condition

    def learners(self, prefix: str = "") -> Q:
        """Return the condition on the counted learners, reached through `prefix`."""
        condition = Q(**{f"{prefix}status__in": COUNTED_STATUSES})
        if self.level:
            condition &= Q(**{f"{prefix}level": self.level})
        if self.learners_in is not None:
            condition &= Q(**{f"{prefix}pk__in": self.learners_in})
        if self.school_ids is not None:
            condition &= Q(**{f"{prefix}school_id__in": self.school_ids})
        return condition


@dataclass(frozen=True)
class Headline:
    registered: int
    in_progress: int
    pending_delivery: int


def cohort_headline(filters: CohortFilters) -> Headline:
    """Return the learners registered, with an attempt under way, and the attempts waiting."""
    registered = Learner.objects.filter(filters.learners(), filters.window("registered_at"))
    # Every attempt belongs to an active or erased learner (registration completes before
    # any offer), so only a level filter needs the learners joined.
    attempts = AssessmentAttempt.objects.all()
    if filters.level:
        attempts = attempts.filter(learner__level=filters.level)
    if filters.learners_in is not None:
        attempts = attempts.filter(learner_id__in=filters.learners_in)
    if filters.school_ids is not None:
        attempts = attempts.filter(learner__school_id__in=filters.school_ids)
    under_way = Q(state__in=AssessmentAttempt.OPEN_STATES) & filters.window("offered_at")
    # An attempt waiting for delivery may not have reached the upstream yet: until then its
    # offer is the only date it has.
    waiting = Q(state__in=PENDING_DELIVERY_STATES)
    if filters.start is not None or filters.end is not None:
        waiting &= filters.window("submitted_at") | (
            Q(submitted_at__isnull=True) & filters.window("offered_at")
        )
    unfinished = AssessmentAttempt.OPEN_STATES + PENDING_DELIVERY_STATES
    counts = attempts.filter(state__in=unfinished).aggregate(
        in_progress=Count("learner_id", distinct=True, filter=under_way),
        pending_delivery=Count("pk", filter=waiting),
    )
    return Headline(registered=registered.count(), **counts)


def completed_results(filters: CohortFilters) -> QuerySet[AssessmentResult]:
    """Return the results of completed attempts within the filters, one per attempt."""
    return AssessmentResult.objects.filter(
        filters.learners("attempt__learner__"),
        filters.window("attempt__completed_at"),
        attempt__state=State.COMPLETED,
    )


def latest_in_window(filters: CohortFilters) -> Q:
    """Return the condition on read model rows: each learner's latest result in the filters."""
    # The latest in [start, end) is the one in range whose successor came at `end` or later
    # (or never came): see dashboard.models.
    condition = filters.window("completed_at")
    if filters.end is None:
        condition &= LATEST
    else:
        condition &= LATEST | Q(superseded_at__gte=filters.end)
    if filters.level:
        condition &= Q(level=filters.level)
    return condition


def latest_results(filters: CohortFilters) -> QuerySet[CohortResult]:
    """Return the read model's rows of each counted learner's latest result in the filters."""
    results = CohortResult.objects.filter(latest_in_window(filters))
    if filters.learners_in is not None:
        results = results.filter(learner_id__in=filters.learners_in)
    if filters.school_ids is not None:
        # The read model's own copy of the school: no join to the learners.
        results = results.filter(school_id__in=filters.school_ids)
    return results


def risk_distribution(filters: CohortFilters) -> list[tuple[str, int]]:
    """Return (risk level, learners) over each learner's latest result, most worrying first."""
    rows = (
        latest_results(filters)
        .values_list("risk_level")
        # count(*) lets PostgreSQL answer from the index alone (count(id) reads the rows).
        .annotate(learners=Count("*"))
        .order_by()
    )
    return sorted(rows, key=lambda row: _risk_rank(row[0]))


def needs_help_by_area(filters: CohortFilters) -> list[tuple[str, int]]:
    """Return (focus area, learners needing help there) over each learner's latest result."""
    areas = CohortNeedsHelp.objects.filter(latest_in_window(filters))
    if filters.learners_in is not None:
        # Through the learners' own latest results (their rows carry the same dates): found
        # under each learner, where a join would read every result of every school.
        areas = areas.filter(cohort_result__in=latest_results(filters))
    elif filters.school_ids is not None:
        areas = areas.filter(school_id__in=filters.school_ids)  # the read model's own copy
    rows = (
        areas.values_list("name")
        # count(*) lets PostgreSQL answer from the index alone (count(id) reads the rows).
        .annotate(learners=Count("*"))
        .order_by()
    )
    return sorted(rows, key=lambda row: (-row[1], row[0].lower()))


def _risk_rank(risk_level: str) -> tuple[int, str]:
    label = risk_level.strip().lower()
    rank = RISK_ORDER.index(label) if label in RISK_ORDER else len(RISK_ORDER)
    return rank, label


def min_group_size() -> int:
    """Return the smallest count shown exactly (DASHBOARD_MIN_GROUP_SIZE)."""
    return max(1, settings.DASHBOARD_MIN_GROUP_SIZE)
