"""Business rules of safeguarding alerts: raising, emailing, acknowledging, escalating."""

import logging
from collections.abc import Iterable
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from accounts.access import safeguarding_leads, trust_safeguarding_leads
from accounts.models import StaffRole
from assessments.concern import Concern, concern_of_result
from assessments.models import AssessmentResult
from audit.models import AuditEvent
from audit.services import audit_record
from followups.services import followup_open_for_result
from learners.models import Learner
from safeguarding.entries import entry_add_action
from safeguarding.hours import school_deadline
from safeguarding.models import UNACKNOWLEDGED, Alert, AlertEmail, ChronologyEntry
from safeguarding.tasks import enqueue_alert_email, enqueue_escalation
from schools.models import PartnerSettings, default_school_id

logger = logging.getLogger(__name__)

Action = AuditEvent.Action


def recipients_of(purpose: str, school_id: int | None = None) -> list[str]:
    """Return the addresses an alert email goes to: never the partner's admins.

    Raised: the school's DSLs and their deputies, never another school's. Escalated: the
    trust's safeguarding leads first, then the school's deputies and DSLs again.
    """
    roles = [StaffRole.DSL, StaffRole.DEPUTY_DSL]
    trust: list[str] = []
    if purpose == AlertEmail.Purpose.ESCALATED:
        roles = [StaffRole.DEPUTY_DSL, StaffRole.DSL]
        trust = list(trust_safeguarding_leads().values_list("email", flat=True))
    leads = safeguarding_leads(roles, school_id=school_id).values_list("email", flat=True)
    return list(dict.fromkeys([*trust, *leads]))


def escalation_deadline(raised_at: datetime, partner: PartnerSettings) -> datetime:
    """Return when an alert raised at `raised_at` escalates if nobody acknowledges it."""
    return school_deadline(
        raised_at,
        partner.alert_escalate_minutes,
        opens=partner.school_day_starts,
        closes=partner.school_day_ends,
    )


def alert_create(*, now: datetime | None = None, **fields) -> Alert:
    """Create an alert with its deadline and its first email, queued in the same transaction.

    An urgent alert (a pupil who does not feel safe) is due at once: the caller escalates it.
    """
    now = now or timezone.now()
    learner = fields.get("learner")
    # The learner's school: its settings, its leads (a test alert: the school worked in).
    school_id = learner.school_id if learner is not None else default_school_id()
    partner = PartnerSettings.of(school_id)
    due = now if fields.get("urgent") else escalation_deadline(now, partner)
    alert = Alert.objects.create(raised_at=now, escalate_at=due, school_id=school_id, **fields)
    # Its recipients are worked out when it is sent (safeguarding.mail.recipients_now).
    email = AlertEmail.objects.create(alert=alert, purpose=AlertEmail.Purpose.RAISED)
    # With the database queue the task rows are written in this transaction: they exist
    # exactly when the alert does (a rolled-back alert sends nothing).
    enqueue_alert_email(email.pk)
    if alert.kind != Alert.Kind.TEST and not alert.urgent:
        enqueue_escalation(alert.pk, run_after=alert.escalate_at)
    return alert


def alert_raise_for_result(*, result: AssessmentResult) -> Alert | None:
    """Raise the alert of a stored result with a priority or unrecognised value, once."""
    attempt = result.attempt
    if attempt.learner.status == Learner.Status.ERASED:
        return None
    concern: Concern = concern_of_result(result)
    if not concern.raises_alert:
        return None
    existing = Alert.objects.filter(attempt=attempt).first()
    if existing is not None:
        return existing  # a retried delivery: the first storing raised it
    follow_up = followup_open_for_result(result=result, priority=True)
    try:
        with transaction.atomic():
            alert = alert_create(
                kind=Alert.Kind.RESULT,
                reason=concern.reason,
                learner=attempt.learner,
                attempt=attempt,
                follow_up=follow_up,
                values=[
                    {"field": value.field, "value": value.value, "reason": value.reason}
                    for value in concern.values
                ],
            )
    except IntegrityError:
        # A racing worker raised it between our look and our insert: theirs stands.
        return Alert.objects.get(attempt=attempt)
    audit_record(
        actor=None,
        address=None,
        action=Action.ALERT_RAISED,
        learner=attempt.learner,
        alert=alert.pk,
        reason=alert.reason,
    )
    logger.info("Raised safeguarding alert %s for attempt %s", alert.pk, attempt.pk)
    return alert


def alert_emails_retry_failed() -> int:
    """Try again the unsent emails of alerts nobody acknowledged (a lead was just added)."""
    failed = AlertEmail.objects.filter(
        sent_at__isnull=True,
        state=AlertEmail.State.FAILED,
        alert__acknowledged_at__isnull=True,
    )
    ids = list(failed.values_list("pk", flat=True))
    AlertEmail.objects.filter(pk__in=ids).update(
        state=AlertEmail.State.WAITING, tries=0, next_try_at=None
    )
    for email_id in ids:
        enqueue_alert_email(email_id)
    return len(ids)


@transaction.atomic
def alert_raise_test(*, lead: AbstractBaseUser) -> Alert:
    """Send a new safeguarding lead a test alert, shown to every lead until acknowledged."""
    return alert_create(kind=Alert.Kind.TEST, reason=Alert.Reason.TEST, test_recipient=lead)


def alert_acknowledge(
    *,
    alert: Alert,
    by: AbstractBaseUser,
    address: str | None,
    action: str = "",
    category: str = "",
    note: str = "",
) -> bool:
    """Record that a lead has taken the alert on, and what was done; False if someone had.

    The category goes on the alert; the action and note become the first entry of the
    child's chronology, in the same transaction as the acknowledgement.
    """
    if category and category not in Alert.Category.values:
        raise ValueError(f"Unknown concern category {category!r}")
    with transaction.atomic():
        locked = Alert.objects.select_for_update().get(pk=alert.pk)
        if locked.acknowledged_at is not None:
            # Two leads took it on at once: the second one's action is a later one, not lost.
            _add_late_action(locked, by=by, action=action, note=note, category=category)
            return False
        locked.acknowledged_at = timezone.now()
        locked.acknowledged_by = by
        locked.acknowledged_by_username = by.get_username()
        locked.category = category
        locked.save(
            update_fields=[
                "acknowledged_at",
                "acknowledged_by",
                "acknowledged_by_username",
                "category",
            ]
        )
        if locked.learner is not None and (action or note.strip()):
            entry_add_action(alert=locked, by=by, action=action, note=note, category=category)
        audit_record(
            actor=by,
            address=address,
            action=Action.ALERT_ACKNOWLEDGED,
            learner=locked.learner,
            alert=locked.pk,
            kind=locked.kind,
            category=category,
            minutes_to_acknowledge=round(
                (locked.acknowledged_at - locked.raised_at).total_seconds() / 60, 1
            ),
        )
    alert.refresh_from_db()
    return True


def _add_late_action(
    alert: Alert, *, by: AbstractBaseUser, action: str, note: str, category: str
) -> None:
    """Add a lead's action on an alert someone else took on first; its category if it had none."""
    if alert.acknowledged_by_id == by.pk:
        return  # their own form sent twice: recorded the first time
    if category and not alert.category:
        alert.category = category
        alert.save(update_fields=["category"])
    if alert.learner_id is not None and (action or note.strip()):
        entry_add_action(alert=alert, by=by, action=action, note=note)


def alerts_escalate_due(
    *, now: datetime | None = None, alert_ids: Iterable[int] | None = None
) -> int:
    """Escalate the unacknowledged alerts past their deadline; return how many."""
    now = now or timezone.now()
    due = Alert.objects.filter(UNACKNOWLEDGED, escalated_at__isnull=True, escalate_at__lte=now)
    due = due.exclude(kind=Alert.Kind.TEST)
    if alert_ids is not None:
        due = due.filter(pk__in=list(alert_ids))
    escalated = 0
    for alert_id in due.values_list("pk", flat=True):
        with transaction.atomic():
            alert = (
                Alert.objects.select_for_update()
                .filter(UNACKNOWLEDGED, pk=alert_id, escalated_at__isnull=True)
                .first()
            )
            if alert is None:
                continue  # acknowledged or escalated by another process meanwhile
            alert.escalated_at = now
            alert.save(update_fields=["escalated_at"])
            email, _created = AlertEmail.objects.get_or_create(
                alert=alert, purpose=AlertEmail.Purpose.ESCALATED
            )
            audit_record(
                actor=None,
                address=None,
                action=Action.ALERT_ESCALATED,
                learner=alert.learner,
                alert=alert.pk,
            )
            enqueue_alert_email(email.pk)
            escalated += 1
    return escalated


def alert_emails_requeue(*, now: datetime | None = None) -> int:
    """Queue the alert emails that are due and not being sent (a lost task, a retry); count."""
    now = now or timezone.now()
    due = AlertEmail.objects.filter(sent_at__isnull=True).filter(
        Q(state=AlertEmail.State.WAITING, next_try_at__isnull=True)
        | Q(state=AlertEmail.State.WAITING, next_try_at__lte=now)
        | Q(state=AlertEmail.State.SENDING, claimed_until__lt=now)
    )
    ids = list(due.values_list("pk", flat=True))
    for email_id in ids:
        enqueue_alert_email(email_id)
    return len(ids)


def alerts_sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Escalate what is due and queue unsent emails; return the counts."""
    return {
        "escalated": alerts_escalate_due(now=now),
        "emails": alert_emails_requeue(now=now),
    }


def alerts_forget_learner(*, learner: Learner) -> int:
    """Unlink an erased learner's alerts, keeping the timings, and delete their chronology.

    Return how many alerts were unlinked.
    """
    # The chronology is free text about the child: it goes (the learner row stays, anonymised,
    # so the cascade alone would keep it).
    ChronologyEntry.objects.filter(learner=learner).delete()
    # The timings stay for the safeguarding figures, and nothing that leads back to the
    # learner or says anything about them: neither the learner, nor the attempt, nor the
    # values that raised the alert, nor what they asked about, whom they wanted, whether
    # they felt unsafe, or the category of concern.
    return Alert.objects.filter(Q(learner=learner) | Q(attempt__learner=learner)).update(
        learner=None,
        attempt=None,
        values=[],
        about="",
        wanted_contact="",
        urgent=False,
        category="",
    )
