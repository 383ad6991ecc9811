"""Reads of learners shared by staff pages."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.db.models import F, QuerySet
from django.utils import timezone

from accounts.models import SignInLock
from accounts.usernames import username_normal_form
from assessments.models import AssessmentAttempt
from assessments.selectors import with_latest_attempt, with_latest_result
from classes.filters import group_learner_ids, prefetch_current_groups
from classes.models import SchoolGroup
from learners.models import Learner

# Matches the partial indexes on Learner (learner_active_name_idx and its level variant).


State = AssessmentAttempt.State

# The list's filter on the latest assessment: each choice names the states it takes in.
NO_ASSESSMENT = "none"
ASSESSMENT_STATUSES = {
    "open": (State.AVAILABLE, State.IN_PROGRESS),
    "sent": (State.SUBMITTING, State.SUBMIT_PENDING, State.SUBMITTED),
    "completed": (State.COMPLETED,),
    "refused": (State.REJECTED,),
}
# The filter on the latest results' RiskLevel, by rank (assessments.models.risk_rank).
RISK_RANKS = {"high": 3, "moderate": 2, "low": 1}
NEEDS_HELP, NO_HELP_NEEDED = "yes", "no"
# The list's orders. By name is the indexes' order; the others read each learner's latest
# attempt or results for the whole list before a page is cut from it.
BY_NAME, BY_REGISTERED, BY_LATEST_RESULT, BY_RISK = "name", "registered", "result", "risk"
NEWEST_RESULT_FIRST = F("latest_result_at").desc(nulls_last=True)
SORTS = {
    BY_NAME: Learner.LIST_ORDER,
    BY_REGISTERED: ("-registered_at", "-id"),
    BY_LATEST_RESULT: (NEWEST_RESULT_FIRST, *Learner.LIST_ORDER),
    BY_RISK: (
        F("latest_risk_rank").desc(nulls_last=True),
        NEWEST_RESULT_FIRST,
        *Learner.LIST_ORDER,
    ),
}
# Filters and orders that read the latest results: only for staff who may see results.
RESULT_SORTS = (BY_LATEST_RESULT, BY_RISK)


@dataclass(frozen=True)
class LearnerListFilters:
    """The learner list's search, filters and order; empty, every learner by name."""

    query: str = ""
    level: str = ""
    status: str = ""  # a key of ASSESSMENT_STATUSES, or NO_ASSESSMENT
    risk: str = ""  # a key of RISK_RANKS
    needs_help: str = ""  # NEEDS_HELP or NO_HELP_NEEDED
    sort: str = BY_NAME
    group: SchoolGroup | None = None  # one the viewer sees (classes.filters)

    @property
    def reads_results(self) -> bool:
        """Return whether the filters or the order need each learner's latest results."""
        return bool(self.risk or self.needs_help) or self.sort in RESULT_SORTS

    @property
    def narrowed(self) -> bool:
        """Return whether any search or filter leaves learners out."""
        return bool(
            self.query or self.level or self.status or self.risk or self.needs_help or self.group
        )


def learner_list(filters: LearnerListFilters | None = None) -> QuerySet[Learner]:
    """Return registered learners matching the filters, with their latest attempt."""
    return with_latest_attempt(learner_filtered(filters or LearnerListFilters()))


def learner_filtered(filters: LearnerListFilters) -> QuerySet[Learner]:
    """Return registered learners matching the list's filters, in its order."""
    learners = Learner.objects.matching(query=filters.query, level=filters.level)
    if filters.group is not None:
        learners = learners.filter(pk__in=group_learner_ids(filters.group))
    if filters.reads_results:
        learners = with_latest_result(learners)
    elif filters.status:
        learners = with_latest_attempt(learners)
    if filters.status == NO_ASSESSMENT:
        learners = learners.filter(latest_state__isnull=True)
    elif filters.status in ASSESSMENT_STATUSES:
        learners = learners.filter(latest_state__in=ASSESSMENT_STATUSES[filters.status])
    if filters.risk in RISK_RANKS:
        learners = learners.filter(latest_risk_rank=RISK_RANKS[filters.risk])
    if filters.needs_help in (NEEDS_HELP, NO_HELP_NEEDED):
        learners = learners.filter(latest_needs_help=filters.needs_help == NEEDS_HELP)
    if filters.sort in SORTS and filters.sort != BY_NAME:
        return learners.order_by(*SORTS[filters.sort])
    return learners  # matching()'s order: by name, the way the indexes serve best


def learner_rows(learners: QuerySet[Learner], sort: str = BY_NAME) -> QuerySet[Learner]:
    """Return a slice of `learner_filtered` (a page) with each learner's latest attempt.

    Each learner's current classes come prefetched (classes.filters.MEMBERSHIPS_NOW).
    """
    # The latest-attempt subqueries run for the page's rows only: over the whole list, a deep
    # page would run them for every row it skips (page 2000 took 900 ms at 100,000 learners).
    # (Filters and orders on the latest attempt or results cannot avoid it.)
    page = Learner.objects.filter(pk__in=learners.values("pk")).prefetch_related(
        prefetch_current_groups()
    )
    if sort in RESULT_SORTS:
        return with_latest_result(page).order_by(*SORTS[sort])
    return with_latest_attempt(page).order_by(*SORTS.get(sort, Learner.LIST_ORDER))


# A registration still pending after this long was cut off (the process died mid-call).
PENDING_REGISTRATION_STALE_AFTER = timedelta(minutes=10)


def stale_pending_registrations(username: str) -> QuerySet[Learner]:
    """Return pending registrations of this username left behind by a dead process."""
    cutoff = timezone.now() - PENDING_REGISTRATION_STALE_AFTER
    return Learner.objects.filter(
        username=username_normal_form(username),
        status=Learner.Status.PENDING,
        registered_at__lt=cutoff,
    )


def username_taken(username: str) -> bool:
    """Return whether a sign-in account already uses this username's normal form."""
    # Stored usernames are in normal form (learners migration 0008), so an exact match finds
    # "ÉMILE" beside "émile" on every database, where iexact folds only ASCII on SQLite.
    stale = stale_pending_registrations(username).values("user_id")
    return (
        get_user_model()
        .objects.filter(username=username_normal_form(username))
        .exclude(pk__in=stale)
        .exists()
    )


def sign_in_locked_until(learner: Learner) -> datetime | None:
    """Return when the last lock on the learner's sign-in ends, if one is in force."""
    locks = SignInLock.objects.current().filter(user_id=learner.user_id)
    return locks.order_by("-locked_until").values_list("locked_until", flat=True).first()
