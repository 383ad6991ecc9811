"""The trust's figures: one row per school, protected per school, and totals of what is shown.

A fixed few queries, each grouped by school, whatever the number of schools. Each school's
counts are protected on their own (dashboard.disclosure) before any total is formed, and a
total adds up only the figures shown: a count withheld as "fewer than N" adds nothing, so no
school's small count can be worked out by subtracting the others from the total. A school
whose admins withhold its figures (PartnerSettings.withhold_from_trust) is left out of every
query, and so of every total.
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta

from django.apps import apps
from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, QuerySet
from django.db.models.expressions import Window
from django.db.models.functions import RowNumber
from django.utils.translation import gettext as _

from dashboard.disclosure import exact, protect
from dashboard.models import LATEST, CohortNeedsHelp, CohortResult
from dashboard.selectors import COUNTED_STATUSES, min_group_size
from kit.charts import Figure
from learners.models import Learner
from schools.models import PartnerSettings, School


@dataclass(frozen=True)
class SchoolRow:
    """One school's figures (None and empty when withheld), or the trust's total row."""

    name: str
    withheld: bool = False
    registered: Figure | None = None
    assessed: Figure | None = None
    needs_help: tuple[Figure, ...] = ()  # in the order of TrustFigures.areas
    alerts: Figure | None = None
    # Over the acknowledged real alerts: None when there are none.
    median_acknowledgement: timedelta | None = None


@dataclass(frozen=True)
class TrustFigures:
    min_group_size: int
    areas: tuple[str, ...]
    schools: tuple[SchoolRow, ...]
    total: SchoolRow

    @property
    def withheld(self) -> int:
        return sum(row.withheld for row in self.schools)


def alert_model():
    """Return the safeguarding Alert model by name: that app sits above this one."""
    return apps.get_model("safeguarding", "Alert")


def trust_figures() -> TrustFigures:
    """Return every school's figures and the trust's totals, in six queries."""
    size = min_group_size()
    schools = School.everyone()
    withheld = set(
        PartnerSettings.objects.filter(withhold_from_trust=True).values_list("school_id", flat=True)
    )
    counts = _counts_by_school(withheld)
    areas = _area_order(counts["areas"], size)
    rows = tuple(
        SchoolRow(name=school.name, withheld=True)
        if school.pk in withheld
        else _school_row(school, counts, areas, size)
        for school in schools
    )
    shown = [row for row in rows if not row.withheld]
    total = SchoolRow(
        name=_("All schools shown"),
        registered=_sum_shown(_("Learners registered"), [row.registered for row in shown]),
        assessed=_sum_shown(_("Learners assessed"), [row.assessed for row in shown]),
        needs_help=tuple(
            _sum_shown(area, [row.needs_help[i] for row in shown]) for i, area in enumerate(areas)
        ),
        alerts=_sum_shown(_("Alerts raised"), [row.alerts for row in shown]),
        median_acknowledgement=counts["trust_median"],
    )
    return TrustFigures(min_group_size=size, areas=areas, schools=rows, total=total)


def _school_row(school: School, counts: dict, areas: tuple[str, ...], size: int) -> SchoolRow:
    """Return one school's figures, each protected on its own."""
    needing_help = counts["areas"].get(school.pk, {})
    return SchoolRow(
        name=school.name,
        registered=exact(_("Learners registered"), counts["registered"].get(school.pk, 0)),
        assessed=protect(
            _("Learners assessed"), counts["assessed"].get(school.pk, 0), min_size=size
        ),
        # A learner may need help in several areas: each count is protected on its own.
        needs_help=tuple(protect(area, needing_help.get(area, 0), min_size=size) for area in areas),
        alerts=protect(_("Alerts raised"), counts["alerts"].get(school.pk, 0), min_size=size),
        median_acknowledgement=counts["medians"].get(school.pk),
    )


def _sum_shown(label: str, figures: list[Figure]) -> Figure:
    """Return the total of the figures shown: a withheld one adds nothing."""
    return exact(label, sum(figure.value for figure in figures if not figure.withheld))


def _counts_by_school(withheld: set[int]) -> dict:
    """Return the raw counts of the schools not withheld, each read grouped by school."""
    learners = Learner.objects.filter(status__in=COUNTED_STATUSES).exclude(school_id__in=withheld)
    registered = dict(learners.values_list("school_id").annotate(n=Count("*")).order_by())
    # Each learner assessed has exactly one latest result (dashboard.models). count(*) over
    # the read model's own school lets PostgreSQL answer from its index alone.
    assessed = dict(
        CohortResult.objects.filter(LATEST)
        .exclude(school_id__in=withheld)
        .values_list("school_id")
        .annotate(n=Count("*"))
        .order_by()
    )
    areas: dict[int, dict[str, int]] = defaultdict(dict)
    for school_id, name, n in (
        CohortNeedsHelp.objects.filter(LATEST)
        .exclude(school_id__in=withheld)
        .values_list("school_id", "name")
        .annotate(n=Count("*"))
        .order_by()
    ):
        areas[school_id][name] = n
    Alert = alert_model()
    alerts = Alert.objects.exclude(kind=Alert.Kind.TEST).exclude(school_id__in=withheld)
    medians, trust_median = _medians(alerts)
    return {
        "medians": medians,
        "trust_median": trust_median,
        "registered": registered,
        "assessed": assessed,
        "areas": areas,
        "alerts": dict(alerts.values_list("school_id").annotate(n=Count("*")).order_by()),
    }


def _medians(alerts: QuerySet) -> tuple[dict[int, timedelta], timedelta | None]:
    """Return the median time to acknowledge of the alerts by school, and of them all.

    The database ranks the acknowledged alerts by the time taken, in each school and across
    them, and returns only the middle one or two of each: a few rows, however many alerts.
    """
    taken = ExpressionWrapper(F("acknowledged_at") - F("raised_at"), output_field=DurationField())
    in_order = [taken.asc(), F("pk").asc()]
    school = [F("school_id")]
    rows = (
        alerts.filter(acknowledged_at__isnull=False)
        .annotate(
            taken=taken,
            school_rank=Window(RowNumber(), partition_by=school, order_by=in_order),
            school_count=Window(Count("*"), partition_by=school),
            trust_rank=Window(RowNumber(), order_by=in_order),
            trust_count=Window(Count("*")),
        )
        .filter(_middle("school_rank", "school_count") | _middle("trust_rank", "trust_count"))
        .order_by()  # in no order: the newest first (Alert's own) would sort every alert
        .values_list(
            "school_id", "taken", "school_rank", "school_count", "trust_rank", "trust_count"
        )
    )
    by_school: dict[int, list[timedelta]] = defaultdict(list)
    trust: list[timedelta] = []
    # A median of fewer alerts than the smallest group shown would tell one incident's time.
    size = min_group_size()
    for school_id, time_taken, school_rank, school_count, trust_rank, trust_count in rows:
        if _is_middle(school_rank, school_count) and school_count >= size:
            by_school[school_id].append(time_taken)
        if _is_middle(trust_rank, trust_count) and trust_count >= size:
            trust.append(time_taken)
    return {key: _mean(times) for key, times in by_school.items()}, _mean(trust)


def _middle(rank: str, count: str) -> Q:
    """Return the condition that a row is the middle one of an odd count, or of an even two."""
    return Q(**{f"{rank}__gte": (F(count) + 1) / 2, f"{rank}__lte": F(count) / 2 + 1})


def _is_middle(rank: int, count: int) -> bool:
    return (count + 1) // 2 <= rank <= count // 2 + 1


def _mean(times: list[timedelta]) -> timedelta | None:
    return sum(times, timedelta()) / len(times) if times else None


def _area_order(areas: dict[int, dict[str, int]], size: int) -> tuple[str, ...]:
    """Return the focus areas by learners shown needing help across the trust, then by name."""
    shown: dict[str, int] = defaultdict(int)
    for by_name in areas.values():
        for name, n in by_name.items():
            shown[name] += n if n >= size else 0
    return tuple(sorted(shown, key=lambda name: (-shown[name], name.lower())))
