"""The dashboard's figures per class: three grouped queries, whatever the number of classes."""

from dataclasses import dataclass

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet
from django.urls import reverse
from django.utils.http import urlencode

from classes.filters import GROUP_PARAM
from classes.models import GroupMembership, SchoolGroup
from dashboard.disclosure import exact, protect, withheld
from dashboard.models import CohortNeedsHelp
from dashboard.selectors import CohortFilters, latest_results, min_group_size
from kit.charts import Figure
from learners.models import Learner

# A class's learners: its members now, or an archived class's when it was archived (its
# memberships all ended then: classes.services.group_archive).
MEMBERS = Q(group__archived_at__isnull=True, left_at__isnull=True) | Q(
    group__archived_at__isnull=False, left_at__gte=F("group__archived_at")
)


@dataclass(frozen=True)
class ClassFigures:
    group: SchoolGroup
    url: str  # the dashboard for this class
    learners: Figure
    assessed: Figure
    needs_help: Figure | None  # None for staff who do not read results


def class_figures(
    filters: CohortFilters,
    groups: list[SchoolGroup],
    *,
    with_results: bool,
    filter_detail: dict[str, str],
) -> list[ClassFigures]:
    """Return each class's learners, learners assessed and (with results) needing help.

    Learners and learners assessed are counts of work, exact (dashboard.disclosure); needing
    help is how learners did, protected like every such figure.
    """
    size = min_group_size()
    members = _members(filters, groups)
    latest = latest_results(filters)
    in_class = _per_group(members)
    assessed = _per_group(members.filter(learner_id__in=latest.values("learner_id")))
    needing = {}
    if with_results:
        helped = latest.filter(
            Exists(CohortNeedsHelp.objects.filter(cohort_result=OuterRef("pk")))
        ).values("learner_id")
        needing = _per_group(members.filter(learner_id__in=helped))
    rows = []
    for group in groups:
        done = assessed.get(group.pk, 0)
        needs_help = None
        if with_results:
            needs_help = _needs_help(needing.get(group.pk, 0), assessed=done, min_size=size)
        rows.append(
            ClassFigures(
                group=group,
                url=_class_url(filter_detail, group),
                learners=exact(group.name, in_class.get(group.pk, 0)),
                assessed=exact(group.name, done),
                needs_help=needs_help,
            )
        )
    return rows


def _needs_help(count: int, *, assessed: int, min_size: int) -> Figure:
    """Protect a class's count of learners needing help beside its exact count assessed."""
    if 0 < assessed < min_size:
        # Beside an exact small total, even 0 or "fewer than N" would tell how each one did.
        return withheld("")
    return protect("", count, min_size=min_size)


def _members(filters: CohortFilters, groups: list[SchoolGroup]) -> QuerySet[GroupMembership]:
    members = GroupMembership.objects.filter(
        MEMBERS, group__in=groups, learner__status=Learner.Status.ACTIVE
    )
    if filters.level:
        members = members.filter(learner__level=filters.level)
    if filters.learners_in is not None:
        members = members.filter(learner_id__in=filters.learners_in)
    return members


def _per_group(members: QuerySet[GroupMembership]) -> dict[int, int]:
    rows = members.values("group_id").annotate(n=Count("learner_id", distinct=True)).order_by()
    return {row["group_id"]: row["n"] for row in rows}


def _class_url(filter_detail: dict[str, str], group: SchoolGroup) -> str:
    """Return the dashboard with the filters in force, for this class."""
    query = {name: value for name, value in filter_detail.items() if value}
    query[GROUP_PARAM] = str(group.pk)
    return f"{reverse('dashboard:home')}?{urlencode(query)}"
