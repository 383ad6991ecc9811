"""A class at one level: shown only if the class's other levels cannot be worked out from it.

`?group=Y7` shows the class's results at every level; `?group=Y7&level=secondary` the same
class's secondary learners. Subtracting one page from the other gives the class's learners at
the other levels, a group the dashboard never protected as such: 8 needing help in Y7 and 6
among its secondary pupils say that its 2 primary pupils need help. So a class's results at
one level are shown only while every figure of its other levels together (each risk level,
each focus area, needing help and not) is 0 or at least DASHBOARD_MIN_GROUP_SIZE.
"""

from dataclasses import replace

from django.db.models import Count, Exists, OuterRef

from dashboard.models import CohortNeedsHelp
from dashboard.overlaps import pair_passes
from dashboard.selectors import CohortFilters, latest_results


def other_levels_show(filters: CohortFilters, *, min_size: int) -> bool:
    """Return whether a class's results at the level chosen keep its other levels safe.

    True unless both a class and a level are chosen and the class's other levels, found by
    subtraction, would show a small count.
    """
    if filters.group is None or not filters.level:
        return True
    others = replace(filters, level="")
    latest = latest_results(others).exclude(level=filters.level)
    risk = latest.values_list("risk_level").annotate(n=Count("*")).order_by()
    areas = (
        CohortNeedsHelp.objects.filter(cohort_result__in=latest)
        .values_list("name")
        .annotate(n=Count("*"))
        .order_by()
    )
    counts = latest.aggregate(
        assessed=Count("pk"),
        needing=Count(
            "pk", filter=Exists(CohortNeedsHelp.objects.filter(cohort_result=OuterRef("pk")))
        ),
    )
    cells = [n for _, n in risk] + [n for _, n in areas]
    return pair_passes(
        counts["needing"], counts["assessed"] - counts["needing"], min_size=min_size
    ) and all(n == 0 or n >= min_size for n in cells)
