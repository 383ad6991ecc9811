"""Background tasks (django-tasks, database queue "default"): sending alert emails."""

from datetime import datetime

from django_tasks import task, task_backends


@task()
def send_alert_email(email_id: int) -> None:
    """Send an alert email unless it has been sent."""
    from safeguarding.mail import alert_email_send

    alert_email_send(email_id=email_id)


@task()
def escalate_alert(alert_id: int) -> None:
    """Escalate an alert if it is due and still not acknowledged."""
    from safeguarding.services import alerts_escalate_due

    alerts_escalate_due(alert_ids=[alert_id])


def enqueue_alert_email(email_id: int, *, run_after: datetime | None = None) -> None:
    """Queue sending an alert email (a later try waits for the sweep if it cannot defer)."""
    _enqueue(send_alert_email, email_id, run_after)


def enqueue_escalation(alert_id: int, *, run_after: datetime) -> None:
    """Queue the escalation check of an alert at its deadline."""
    _enqueue(escalate_alert, alert_id, run_after)


def _enqueue(chosen_task, object_id: int, run_after: datetime | None) -> None:
    if run_after is not None and not task_backends[chosen_task.backend].supports_defer:
        # The immediate backend (tests) would run it at once; the sweep runs it when due.
        return
    configured = chosen_task.using(run_after=run_after) if run_after else chosen_task
    configured.enqueue(object_id)
