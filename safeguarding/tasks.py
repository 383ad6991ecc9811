"""Background tasks (django-tasks, database queue "default"): sending alert emails."""

from datetime import datetime

from django_tasks import task

from ops.request_context import carries_request_id
from ops.tasks import enqueue_when


@task()
@carries_request_id
def send_alert_email(email_id: int) -> None:
    """Send an alert email unless it has been sent."""
    from safeguarding.mail import alert_email_send

    alert_email_send(email_id=email_id)


@task()
@carries_request_id
def escalate_alert(alert_id: int) -> None:
    """Escalate an alert if it is due and still not acknowledged."""
    from safeguarding.services import alerts_escalate_due

    alerts_escalate_due(alert_ids=[alert_id])


def enqueue_alert_email(email_id: int, *, run_after: datetime | None = None) -> None:
    """Queue sending an alert email (a later try waits for the sweep if it cannot defer)."""
    enqueue_when(send_alert_email, email_id, run_after=run_after)


def enqueue_escalation(alert_id: int, *, run_after: datetime) -> None:
    """Queue the escalation check of an alert at its deadline."""
    enqueue_when(escalate_alert, alert_id, run_after=run_after)
