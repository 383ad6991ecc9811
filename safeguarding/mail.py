"""The alert email: what it says (almost nothing) and sending it exactly once."""

import logging
import smtplib
from datetime import datetime, timedelta

from django.conf import settings
from django.core.mail import EmailMessage
from django.db.models import F, Q
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext as _

from safeguarding.models import Alert, AlertEmail

logger = logging.getLogger(__name__)

# A sender holds an email this long; one that died mid-send leaves it to the next after this.
CLAIM_SECONDS = 5 * 60
# Longest wait between two tries of a failing email.
RETRY_CAP_SECONDS = 30 * 60


def alert_link(alert: Alert) -> str:
    """Return the alert's page: it asks whoever opens it to sign in as a safeguarding lead."""
    return settings.PORTAL_URL + reverse("safeguarding:alert", args=[alert.pk])


def alert_message(email: AlertEmail) -> EmailMessage:
    """Return the message of an alert email.

    It says only that something needs review, and where: no name, group, focus area, answer
    or value, because email is read on phones, forwarded and kept by other systems.
    """
    alert = email.alert
    raised = date_format(timezone.localtime(alert.raised_at), "DATETIME_FORMAT")
    if alert.kind == Alert.Kind.TEST:
        subject = _("Test safeguarding alert: please acknowledge")
        opening = _(
            "You have been made a safeguarding lead on the partner portal. This is a test "
            "alert, to check that alerts reach you. Please sign in and acknowledge it."
        )
    elif email.purpose == AlertEmail.Purpose.ESCALATED and alert.urgent:
        # Escalated the moment it was raised (or made urgent): no deadline has passed, so
        # "not acknowledged" would read as a routine overdue alert. Nothing more is said.
        subject = _("Safeguarding alert: please review now")
        opening = _("A safeguarding alert needs review now. Sign in to read it.")
    elif email.purpose == AlertEmail.Purpose.ESCALATED:
        subject = _("Safeguarding alert not yet acknowledged")
        opening = _(
            "A safeguarding alert raised at %(raised)s has not been acknowledged. "
            "Please sign in and review it now."
        ) % {"raised": raised}
    else:
        # The same words for a result and a pupil's request, urgent or not.
        subject = _("Safeguarding alert needs review")
        opening = _(
            "A safeguarding alert needs review by a safeguarding lead "
            "(raised at %(raised)s). Please sign in to see it."
        ) % {"raised": raised}
    body = "\n\n".join(
        [
            opening,
            alert_link(alert),
            _("You will be asked to sign in. This email holds no details on purpose."),
        ]
    )
    return EmailMessage(
        subject=subject,
        body=body + "\n",
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=list(email.recipients),
    )


def alert_email_claim(*, email_id: int, now: datetime) -> bool:
    """Take an unsent email for this sender; False if it is sent or another sender holds it."""
    # One conditional UPDATE: of two workers racing, exactly one changes the row.
    taken = (
        AlertEmail.objects.filter(pk=email_id, sent_at__isnull=True)
        .filter(
            Q(state=AlertEmail.State.WAITING, next_try_at__isnull=True)
            | Q(state=AlertEmail.State.WAITING, next_try_at__lte=now)
            | Q(state=AlertEmail.State.SENDING, claimed_until__lt=now)
        )
        .update(
            state=AlertEmail.State.SENDING,
            claimed_until=now + timedelta(seconds=CLAIM_SECONDS),
            tries=F("tries") + 1,
        )
    )
    return taken == 1


def alert_email_send(*, email_id: int, now: datetime | None = None) -> str:
    """Send one alert email if nobody has; return its state afterwards."""
    now = now or timezone.now()
    if not alert_email_claim(email_id=email_id, now=now):
        return AlertEmail.objects.filter(pk=email_id).values_list("state", flat=True).first() or ""
    email = AlertEmail.objects.select_related("alert__test_recipient").get(pk=email_id)
    if email.purpose == AlertEmail.Purpose.ESCALATED and email.alert.acknowledged_at:
        # Acknowledged while this waited: "not yet acknowledged" would be untrue.
        AlertEmail.objects.filter(pk=email.pk).update(
            state=AlertEmail.State.SKIPPED, claimed_until=None, last_error=""
        )
        return AlertEmail.State.SKIPPED
    # Who holds the role now: a lead added (or an address corrected) since the alert was
    # raised receives it on the next try.
    email.recipients = recipients_now(email)
    try:
        if not email.recipients:
            raise NoRecipients
        alert_message(email).send(fail_silently=False)
    except (OSError, smtplib.SMTPException, NoRecipients) as error:
        return _record_failure(email, error, now=now)
    except Exception as error:  # noqa: BLE001 - an address the server refuses to parse, say
        logger.exception("Alert email %s could not be built or sent", email.pk)
        return _record_failure(email, error, now=now)
    AlertEmail.objects.filter(pk=email.pk).update(
        state=AlertEmail.State.SENT,
        sent_at=timezone.now(),
        claimed_until=None,
        last_error="",
        recipients=email.recipients,
    )
    logger.info("Sent %s email of safeguarding alert %s", email.purpose, email.alert_id)
    return AlertEmail.State.SENT


def recipients_now(email: AlertEmail) -> list[str]:
    """Return who the email goes to as the roles stand now (the test recipient for a test)."""
    alert = email.alert
    if alert.kind == Alert.Kind.TEST:
        lead = alert.test_recipient
        return [lead.email] if lead is not None and lead.is_active and lead.email else []
    from safeguarding.services import recipients_of

    return recipients_of(email.purpose, alert.school_id)


class NoRecipients(Exception):
    """Nobody with an email address holds the role the alert goes to."""


def _record_failure(email: AlertEmail, error: Exception, *, now: datetime) -> str:
    # The class and SMTP code only: a server's reply may echo addresses back.
    code = getattr(error, "smtp_code", None)
    reason = (
        _("No safeguarding lead has an email address.")
        if isinstance(error, NoRecipients)
        else f"{type(error).__name__}{f' {code}' if code else ''}"
    )
    gave_up = email.tries >= settings.ALERT_EMAIL_MAX_TRIES
    delay = min(settings.ALERT_EMAIL_RETRY_BASE * 2 ** max(email.tries - 1, 0), RETRY_CAP_SECONDS)
    next_try = None if gave_up else now + timedelta(seconds=delay)
    AlertEmail.objects.filter(pk=email.pk).update(
        state=AlertEmail.State.FAILED if gave_up else AlertEmail.State.WAITING,
        claimed_until=None,
        next_try_at=next_try,
        last_error=reason[:300],
        recipients=email.recipients,
    )
    logger.warning(
        "Could not send %s email of safeguarding alert %s (try %s): %s",
        email.purpose,
        email.alert_id,
        email.tries,
        reason,
    )
    if next_try is not None:
        from safeguarding.tasks import enqueue_alert_email

        enqueue_alert_email(email.pk, run_after=next_try)
    return AlertEmail.State.FAILED if gave_up else AlertEmail.State.WAITING
