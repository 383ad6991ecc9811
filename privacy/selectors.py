"""How long a learner's records are kept: their last activity, and what holds them longer.

The rule (docs/architecture.md, "Children's data"): a learner's answers, results and attempts
are erased `PartnerSettings.retention_years` after their last activity (or their leaving the
school, if later), unless held. A
safeguarding concern (an alert about them or one of their results, or a follow-up) holds them
until the learner's 25th birthday, as the records guidance schools follow asks, unless staff
lifted the hold after the concern was raised; a hold staff placed keeps them until lifted.
"""

from dataclasses import dataclass
from datetime import date, datetime

from django.db.models import DateTimeField, Max, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from assessments.models import AssessmentAttempt, AttemptAnswer
from classes.models import GroupMembership
from followups.models import FollowUp
from learners.models import Learner
from privacy.models import RecordsHold
from safeguarding.models import Alert
from safeguarding.selectors import alert_waiting_about
from schools.models import PartnerSettings

# The age until which a safeguarding concern keeps a learner's records.
HOLD_UNTIL_AGE = 25


def add_years(day: date, years: int) -> date:
    """Return the same day `years` later (or earlier); 29 February becomes 1 March."""
    try:
        return day.replace(year=day.year + years)
    except ValueError:
        return day.replace(year=day.year + years, month=3, day=1)


def years_before(moment: datetime, years: int) -> datetime:
    """Return the same moment `years` earlier (29 February becomes 1 March)."""
    earlier = add_years(moment.date(), -years)
    return moment.replace(year=earlier.year, month=earlier.month, day=earlier.day)


def with_last_activity(learners: QuerySet[Learner]) -> QuerySet[Learner]:
    """Annotate `last_activity`: the latest answer, attempt time, sign-in, registration or leaving.

    A leaver's records are kept the retention period from the day they left the school (the
    roster's `left_at`), however long before that they last signed in.
    """
    registered = "registered_at"
    attempts = AssessmentAttempt.objects.filter(learner=OuterRef("pk")).order_by()
    attempt_times = ["started_at", "last_saved_at", "submitted_at", "completed_at"]
    # offered_at is never empty; SQLite's MAX() of several values is empty if any one is.
    latest_in_attempt = Greatest(
        "offered_at", *[Coalesce(field, "offered_at") for field in attempt_times]
    )
    latest_attempt = Subquery(
        attempts.values("learner").annotate(latest=Max(latest_in_attempt)).values("latest")[:1],
        output_field=DateTimeField(),
    )
    latest_answer = Subquery(
        AttemptAnswer.objects.filter(attempt__learner=OuterRef("pk"))
        .order_by()
        .values("attempt__learner")
        .annotate(latest=Max("saved_at"))
        .values("latest")[:1],
        output_field=DateTimeField(),
    )
    return learners.annotate(
        last_activity=Greatest(
            registered,
            Coalesce("user__last_login", registered),
            Coalesce(latest_attempt, registered),
            Coalesce(latest_answer, registered),
            Coalesce("left_at", registered),
            output_field=DateTimeField(),
        )
    )


def last_activity_of(learner: Learner) -> datetime:
    """Return when the learner last did anything in the portal (see with_last_activity)."""
    return with_last_activity(Learner.objects.filter(pk=learner.pk)).get().last_activity


def learners_past_retention(*, now: datetime) -> QuerySet[Learner]:
    """Return the learners whose last activity is older than their school's retention period."""
    past = Q(pk__in=[])
    for school_id, years in PartnerSettings.objects.values_list("school_id", "retention_years"):
        past |= Q(school_id=school_id, last_activity__lt=years_before(now, years))
    active = Learner.objects.filter(status=Learner.Status.ACTIVE)
    return with_last_activity(active).filter(past)


@dataclass(frozen=True)
class Hold:
    """Whether a learner's records are held past the retention period, until when and why."""

    # A hold staff placed: kept until they lift it.
    placed: RecordsHold | None = None
    # The automatic hold: a safeguarding alert or a follow-up, raised since the latest lift.
    alert: bool = False
    follow_up: bool = False
    # The learner's 25th birthday (empty if their date of birth is not known).
    birthday_25: date | None = None
    # The automatic hold has ended: the learner is 25 (their records follow the usual rule).
    ended: bool = False
    # When staff last lifted the automatic hold, if they did.
    lifted: RecordsHold | None = None

    @property
    def automatic(self) -> bool:
        """Return whether a safeguarding concern holds the records now."""
        return (self.alert or self.follow_up) and not self.ended

    @property
    def held(self) -> bool:
        return self.placed is not None or self.automatic

    @property
    def until(self) -> date | None:
        """Return the day the hold ends by itself (None: when staff lift it, or not held)."""
        if self.placed is None and self.automatic:
            return self.birthday_25
        return None


def hold_of(learner: Learner, *, today: date) -> Hold:
    """Return what holds the learner's records on a given day."""
    record = RecordsHold.objects.filter(learner=learner).first()
    lifted = record if record is not None and record.lifted_at is not None else None
    alerts = Alert.objects.filter(Q(learner=learner) | Q(attempt__learner=learner)).exclude(
        kind=Alert.Kind.TEST
    )
    follow_ups = FollowUp.objects.filter(learner=learner)
    if lifted is not None:
        # A lift covers the concerns staff knew of; one raised later holds the records again.
        alerts = alerts.filter(raised_at__gt=lifted.lifted_at)
        follow_ups = follow_ups.filter(created_at__gt=lifted.lifted_at)
    birthday = add_years(learner.dob, HOLD_UNTIL_AGE) if learner.dob else None
    return Hold(
        placed=record if record is not None and record.in_force else None,
        alert=alerts.exists(),
        follow_up=follow_ups.exists(),
        birthday_25=birthday,
        ended=birthday is not None and today >= birthday,
        lifted=lifted,
    )


# What must happen before a learner's records may be erased (erasure_wait).
ERASURE_WAITS_FOR_ALERT = "alert"  # a safeguarding lead acknowledges the alert
ERASURE_WAITS_FOR_LIFT = "lift"  # a safeguarding lead lifts the hold, giving a reason


def erasure_wait(learner: Learner, *, today: date) -> str | None:
    """Return what must happen before the learner's records may be erased; None: nothing.

    An unacknowledged alert comes first: until a lead has read it, nobody knows whether the
    records are needed, and lifting the hold would not settle it.
    """
    if alert_waiting_about(learner):
        return ERASURE_WAITS_FOR_ALERT
    if hold_of(learner, today=today).held:
        return ERASURE_WAITS_FOR_LIFT
    return None


def kept_until(learner: Learner) -> date:
    """Return the last day of the learner's records if nothing holds them and they stay away."""
    years = PartnerSettings.of(learner.school_id).retention_years
    return add_years(timezone.localdate(last_activity_of(learner)), years)


def learner_contact(learner: Learner) -> str:
    """Return who a learner can ask at school: their group's contact, else the partner's."""
    group_contact = (
        GroupMembership.objects.filter(learner=learner, left_at__isnull=True)
        .exclude(group__contact="")
        .order_by("-joined_at", "-id")
        .values_list("group__contact", flat=True)
        .first()
    )
    return group_contact or PartnerSettings.of(learner.school_id).school_contact
