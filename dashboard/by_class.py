"""The dashboard's figures per class: a fixed few queries, whatever the number of classes."""

from dataclasses import dataclass, replace

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet
from django.urls import reverse
from django.utils.http import urlencode

from classes.filters import GROUP_PARAM
from classes.models import GroupMembership, SchoolGroup
from dashboard.disclosure import exact, protect, withheld
from dashboard.models import CohortNeedsHelp, CohortResult
from dashboard.overlaps import group_passes, pair_passes, withhold_overlaps
from dashboard.selectors import CohortFilters, latest_results, min_group_size
from kit.charts import Figure
from learners.models import Learner

# A class's learners: its members now, or an archived class's when it was archived (its
# memberships all ended then: classes.services.group_archive).
MEMBERS = Q(group__archived_at__isnull=True, left_at__isnull=True) | Q(
    group__archived_at__isnull=False, left_at__gte=F("group__archived_at")
)
TOTAL = "total"  # the page's own total, as a row of the overlaps (dashboard.overlaps)


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
    results_withheld: bool = False,
) -> list[ClassFigures]:
    """Return each class's learners, learners assessed and (with results) needing help.

    Learners and learners assessed are counts of work, exact (dashboard.disclosure); needing
    help is how learners did, protected like every such figure, and withheld too where it and
    another figure on the page (a class inside it, the page's total, the same class at every
    level) would give a small group away by subtraction (dashboard.overlaps).
    `results_withheld` withholds it for every class (dashboard.level_parts).
    """
    if not groups:
        return []  # and no query
    size = min_group_size()
    members = _members(filters, groups)
    in_class = _per_group(members)
    assessed = _assessed(filters, members)
    needs_help: dict[int, Figure] = {}
    if with_results:
        needs_help = _protected(filters, groups, assessed, min_size=size)
        if results_withheld:
            needs_help = {pk: withheld("") for pk in needs_help}
    return [
        ClassFigures(
            group=group,
            url=_class_url(filter_detail, group),
            learners=exact(group.name, in_class.get(group.pk, 0)),
            assessed=exact(group.name, len(assessed.get(group.pk, ()))),
            needs_help=needs_help.get(group.pk) if with_results else None,
        )
        for group in groups
    ]


def _protected(
    filters: CohortFilters,
    groups: list[SchoolGroup],
    assessed: dict[int, frozenset[int]],
    *,
    min_size: int,
) -> dict[int, Figure]:
    """Return each class's needing help, protected alone, beside the total and across levels."""
    latest = latest_results(filters)
    helped = _helped(latest)
    figures = {
        group.pk: _needs_help(
            len(assessed.get(group.pk, frozenset()) & helped),
            assessed=len(assessed.get(group.pk, ())),
            min_size=min_size,
        )
        for group in groups
    }
    shown = {pk for pk, figure in figures.items() if not figure.withheld}
    if filters.level:
        # The same class at every level, less this level, is the class's other levels.
        every_level = replace(filters, level="")
        everyone = _assessed(every_level, _members(every_level, groups))
        helped_anywhere = _helped(latest_results(every_level))
        shown -= {
            pk
            for pk in shown
            if not group_passes(
                everyone.get(pk, frozenset()) - assessed.get(pk, frozenset()),
                helped_anywhere,
                min_size=min_size,
            )
        }
    # The focus areas above count the page's total: a class inside it is compared with it too.
    rows: dict[int | str, frozenset[int]] = {**assessed, TOTAL: frozenset(_learner_ids(latest))}
    shown -= withhold_overlaps(
        rows, helped, shown=set(shown), fixed=frozenset({TOTAL}), min_size=min_size
    )
    return {pk: figure if pk in shown else _withheld(figure) for pk, figure in figures.items()}


def _withheld(figure: Figure) -> Figure:
    return figure if figure.withheld else withheld("")


def _needs_help(count: int, *, assessed: int, min_size: int) -> Figure:
    """Protect a class's needing help together with its not needing help (assessed is exact)."""
    # Beside an exact count assessed, needing help tells not needing help too: 6 of 6 says
    # everyone, 5 of 7 says 2 do not, 0 of 2 says neither. So it is shown only while both
    # are 0 or at least min_size, or as "fewer than N" while those not needing it are many.
    if pair_passes(count, assessed - count, min_size=min_size):
        return exact("", count)
    if assessed - count >= min_size:
        return protect("", count, min_size=min_size)
    return withheld("")


def _assessed(filters: CohortFilters, members: QuerySet[GroupMembership]) -> dict[int, frozenset]:
    """Return each class's learners with a latest result within the filters."""
    rows = (
        members.filter(learner_id__in=latest_results(filters).values("learner_id"))
        .values_list("group_id", "learner_id")
        .distinct()
        .order_by()
    )
    found: dict[int, set[int]] = {}
    for group_id, learner_id in rows:
        found.setdefault(group_id, set()).add(learner_id)
    return {group_id: frozenset(ids) for group_id, ids in found.items()}


def _helped(latest: QuerySet[CohortResult]) -> frozenset[int]:
    """Return the learners whose latest result needs help in at least one area."""
    flagged = latest.filter(Exists(CohortNeedsHelp.objects.filter(cohort_result=OuterRef("pk"))))
    return frozenset(_learner_ids(flagged))


def _learner_ids(latest: QuerySet[CohortResult]) -> list[int]:
    return list(latest.values_list("learner_id", flat=True).order_by())


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
