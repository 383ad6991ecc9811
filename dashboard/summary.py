"""The dashboard's figures, protected and linked, ready for the template and the charts."""

from dataclasses import dataclass

from django.urls import reverse
from django.utils.http import urlencode
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from classes.filters import GROUP_PARAM
from dashboard.disclosure import exact, protect, protect_parts
from dashboard.level_parts import other_levels_show
from dashboard.selectors import (
    CohortFilters,
    cohort_headline,
    min_group_size,
    needs_help_by_area,
    risk_distribution,
)
from kit.charts import Figure, bar_chart


@dataclass(frozen=True)
class CohortSummary:
    min_group_size: int
    headline: list[Figure]
    assessed: Figure
    risk: list[Figure]
    risk_chart: SafeString
    needs_help: list[Figure]
    needs_help_chart: SafeString
    # Fewer learners assessed than the smallest group shown: no breakdown of how they did.
    too_few_assessed: bool = False
    # A class at one level whose other levels would be given away (dashboard.level_parts).
    other_levels_withheld: bool = False


def cohort_summary(
    filters: CohortFilters, *, with_results: bool = True, with_operations: bool = True
) -> CohortSummary:
    """Return every figure of the dashboard for these filters, in four queries.

    Without results (staff whose role does not read them), the risk levels and focus areas are
    left empty: only progress and completion remain.
    """
    size = min_group_size()
    counts = cohort_headline(filters)
    risk_rows = risk_distribution(filters)
    # Every learner assessed in the window has exactly one latest result there.
    assessed = sum(n for _, n in risk_rows)
    # The lists the figures link to, narrowed the same way (their `level` and `group`).
    level = {"level": filters.level} if filters.level else {}
    if filters.group is not None:
        level[GROUP_PARAM] = str(filters.group.pk)
    undated = filters.start is None and filters.end is None
    # Operational figures are exact (dashboard.disclosure), learners assessed among them: who
    # has finished is shown learner by learner on the learner list and the class page.
    headline = [
        exact(
            _("Learners registered"),
            counts.registered,
            # The learner list has no date filter: link it only when it shows the same learners.
            url=_url("learners:list", level) if undated else "",
        ),
        exact(_("Learners assessed"), assessed),
        exact(_("Learners with an assessment in progress"), counts.in_progress),
        exact(
            _("Assessments waiting to be delivered"),
            counts.pending_delivery,
            url=reverse("operations") if with_operations else "",
        ),
    ]
    # The risk levels add up to the learners assessed, the total shown beside them. Below the
    # smallest group shown, that exact total would give away how each of them did (a single
    # "fewer than 5" row beside "3 assessed" says all 3): no breakdown at all then.
    too_few = 0 < assessed < size
    others_withheld = with_results and not other_levels_show(filters, min_size=size)
    if not with_results or too_few or others_withheld:
        risk_rows = []
    risk = protect_parts(
        risk_rows,
        min_size=size,
        urls={name: _url("followups:queue", {"risk": name, **level}) for name, _ in risk_rows},
    )
    breakdown = with_results and not too_few and not others_withheld
    area_rows = needs_help_by_area(filters) if breakdown else []
    # A learner may need help in several areas: these counts are not parts of one total, so
    # each is protected on its own.
    needs_help = [
        protect(name, n, min_size=size, url=_url("followups:queue", {"area": name, **level}))
        for name, n in area_rows
    ]
    return CohortSummary(
        min_group_size=size,
        headline=headline,
        assessed=headline[1],
        risk=risk,
        risk_chart=bar_chart(
            chart_id="risk-chart",
            title=_("Learners by risk level in their latest results"),
            figures=risk,
        ),
        needs_help=needs_help,
        needs_help_chart=bar_chart(
            chart_id="needs-help-chart",
            title=_("Learners needing help, by focus area, in their latest results"),
            figures=needs_help,
        ),
        too_few_assessed=too_few,
        other_levels_withheld=others_withheld,
    )


def _url(name: str, query: dict[str, str]) -> str:
    url = reverse(name)
    return f"{url}?{urlencode(query)}" if query else url
