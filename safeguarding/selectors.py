"""Reads of safeguarding alerts that several pages share: the banner, the list, the timings."""

import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Q, QuerySet

from learners.models import Learner
from safeguarding.models import UNACKNOWLEDGED, Alert, AlertEmail


@dataclass(frozen=True)
class LeadsBanner:
    """What every page tells a safeguarding lead until someone acts on it."""

    waiting: int  # real alerts not yet acknowledged
    overdue: int  # of those, escalated: past their deadline
    urgent: int  # of those, a pupil who said they do not feel safe (escalated at once)
    tests: int  # test alerts not yet acknowledged
    failed_emails: int  # alert emails that could not be sent (yet)

    @property
    def shown(self) -> bool:
        return bool(self.waiting or self.tests or self.failed_emails)


def in_schools(rows: QuerySet, school_ids: list[int] | None, field: str = "school_id"):
    """Return the rows of those schools (None: every school)."""
    return rows if school_ids is None else rows.filter(**{f"{field}__in": school_ids})


def leads_banner(school_ids: list[int] | None = None, *, trust: bool = False) -> LeadsBanner:
    """Return the counts of the safeguarding leads' banner (two small indexed queries).

    A school's leads count their school's alerts; a trust safeguarding lead also every
    school's escalated ones (escalation is theirs), whichever school they work in.
    """
    alerts = Alert.objects.filter(UNACKNOWLEDGED)
    if school_ids is not None:
        mine = Q(school_id__in=school_ids)
        if trust:
            mine |= Q(escalated_at__isnull=False)
        alerts = alerts.filter(mine)
    counts = alerts.aggregate(
        waiting=Count("pk", filter=~Q(kind=Alert.Kind.TEST)),
        # An urgent one escalates at once: it is not late, and the banner says it is urgent.
        overdue=Count(
            "pk",
            filter=~Q(kind=Alert.Kind.TEST) & Q(escalated_at__isnull=False, urgent=False),
        ),
        urgent=Count("pk", filter=~Q(kind=Alert.Kind.TEST) & Q(urgent=True)),
        tests=Count("pk", filter=Q(kind=Alert.Kind.TEST)),
    )
    # Until the alert is acknowledged: then someone has it in hand, email or not (the
    # operations page keeps listing the email).
    failed = in_schools(
        unsent_alert_emails_query().filter(alert__acknowledged_at__isnull=True),
        school_ids,
        "alert__school_id",
    ).count()
    return LeadsBanner(failed_emails=failed, **counts)


def alert_waiting_about(learner: Learner) -> bool:
    """Return whether a real alert about the learner, or one of their results, is unacknowledged."""
    about = Q(learner=learner) | Q(attempt__learner=learner)
    return Alert.objects.filter(UNACKNOWLEDGED, about).exclude(kind=Alert.Kind.TEST).exists()


def alerts_for_list(*, show: str, school_ids: list[int] | None = None) -> QuerySet:
    """Return the alerts of the leads' list (of those schools); waiting: urgent, then oldest."""
    alerts = in_schools(
        Alert.objects.select_related("learner", "acknowledged_by", "school").prefetch_related(
            "emails"
        ),
        school_ids,
    )
    if show == "waiting":
        return alerts.filter(UNACKNOWLEDGED).order_by("-urgent", "raised_at", "pk")
    return alerts.order_by("-raised_at", "-pk")


@dataclass(frozen=True)
class AcknowledgementTimes:
    """How long real alerts raised in a period took to be acknowledged."""

    raised: int
    acknowledged: int
    median: timedelta | None
    worst: timedelta | None
    # Raised in the period and still waiting: the worst is at least as long as their wait.
    waiting: int
    longest_waiting: timedelta | None


def acknowledgement_times(
    *, since: datetime, until: datetime, now: datetime, school_ids: list[int] | None = None
) -> AcknowledgementTimes:
    """Return time to acknowledge (median and worst) of the real alerts raised in a period."""
    rows = list(
        in_schools(Alert.objects.all(), school_ids)
        .exclude(kind=Alert.Kind.TEST)
        .filter(raised_at__gte=since, raised_at__lt=until)
        .values_list("raised_at", "acknowledged_at")
    )
    taken = [acked - raised for raised, acked in rows if acked is not None]
    waits = [now - raised for raised, acked in rows if acked is None]
    return AcknowledgementTimes(
        raised=len(rows),
        acknowledged=len(taken),
        median=statistics.median(taken) if taken else None,
        worst=max(taken) if taken else None,
        waiting=len(waits),
        longest_waiting=max(waits) if waits else None,
    )


def unsent_alert_emails_query() -> QuerySet:
    """Return the alert emails that failed at least once and are not sent."""
    return (
        AlertEmail.objects.filter(sent_at__isnull=True)
        .exclude(state=AlertEmail.State.SKIPPED)
        .filter(Q(state=AlertEmail.State.FAILED) | ~Q(last_error=""))
    )


def unsent_alert_emails(school_ids: list[int] | None = None) -> list[AlertEmail]:
    """Return the unsent alert emails (of those schools) for the operations page, oldest first."""
    emails = in_schools(unsent_alert_emails_query(), school_ids, "alert__school_id")
    return list(emails.order_by("created_at", "pk")[:50])
