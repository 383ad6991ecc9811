"""How long a learner's records are kept: their last activity, and what holds them longer.

The rule (docs/architecture.md, "Children's data"): a learner's answers, results and attempts
are erased `PartnerSettings.retention_years` after their last activity (or their leaving the
school, or the resolving of a follow-up about them, if later), unless held. Child-protection
records are held until the learner's 25th birthday, as the records guidance schools follow
asks: a safeguarding alert about them or one of their results (a priority value, an
unrecognised value, or the learner asking to talk to someone; never a test alert). A routine
follow-up (a result needing help, no alert) holds them only while it is open. Either hold
ends when staff lift it after the concern was raised; a hold staff placed keeps them until
lifted.
"""

from dataclasses import dataclass
from datetime import date, datetime

from django.db.models import DateTimeField, Max, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from assessments.models import AssessmentAttempt, AttemptAnswer
from classes.models import GroupMembership
from followups.models import OPEN, FollowUp
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
    """Annotate `last_activity`: the latest answer, attempt, sign-in, registration, leaving, etc.

    The latest of: registration, last sign-in, any attempt's times, any saved answer, leaving
    the school and resolving a follow-up. A leaver's records are kept the retention period
    from the day they left the school (the roster's `left_at`), however long before that they
    last signed in; after a routine follow-up, from the day it was resolved (while open, it
    holds them: hold_of).
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
    # Empty while every follow-up is open (or there is none): Coalesce below, as SQLite's
    # MAX() of several values is empty if any one is.
    latest_resolution = Subquery(
        FollowUp.objects.filter(learner=OuterRef("pk"), resolved_at__isnull=False)
        .order_by()
        .values("learner")
        .annotate(latest=Max("resolved_at"))
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
            Coalesce(latest_resolution, registered),
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
    # A safeguarding alert raised since the latest lift: held until the 25th birthday.
    alert: bool = False
    # A routine follow-up opened since the latest lift and still open: held while it is open.
    open_follow_up: bool = False
    # The learner's 25th birthday (empty if their date of birth is not known).
    birthday_25: date | None = None
    # The alert's hold has ended: the learner is 25 (their records follow the usual rule).
    ended: bool = False
    # When staff last lifted the automatic hold, if they did.
    lifted: RecordsHold | None = None

    @property
    def safeguarding(self) -> bool:
        """Return whether a safeguarding alert holds the records now (to the 25th birthday)."""
        return self.alert and not self.ended

    @property
    def automatic(self) -> bool:
        """Return whether an alert or an open follow-up holds the records now."""
        return self.safeguarding or self.open_follow_up

    @property
    def held(self) -> bool:
        return self.placed is not None or self.automatic

    @property
    def until(self) -> date | None:
        """Return the day the hold ends by itself (None: not held, or not by a date)."""
        if self.placed is None and self.safeguarding:
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
    # A priority follow-up is opened with an alert; should that alert's row be gone or
    # unlinked (it keeps no learner once erased, and rows made before alerts existed have
    # none), the follow-up still records a child-protection concern, so it holds to the 25th
    # birthday as the alert would: the safe side when the two disagree.
    alert = alerts.exists() or follow_ups.filter(priority=True).exists()
    birthday = add_years(learner.dob, HOLD_UNTIL_AGE) if learner.dob else None
    return Hold(
        placed=record if record is not None and record.in_force else None,
        alert=alert,
        open_follow_up=follow_ups.filter(OPEN, priority=False).exists(),
        birthday_25=birthday,
        ended=alert and birthday is not None and today >= birthday,
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
