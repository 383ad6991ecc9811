"""Background tasks (django-tasks, database queue): delivery and results fetch."""

from datetime import datetime

from django_tasks import task

from ops.request_context import carries_request_id
from ops.tasks import enqueue_when


@task()
@carries_request_id
def deliver_submission(attempt_id: int) -> None:
    """Deliver a pending submission if it is due."""
    from assessments.delivery import attempt_deliver

    attempt_deliver(attempt_id=attempt_id)


@task()
@carries_request_id
def fetch_results(attempt_id: int) -> None:
    """Fetch the results of a submitted attempt if it has none yet."""
    from assessments.delivery import attempt_fetch_results_when_due

    attempt_fetch_results_when_due(attempt_id=attempt_id)


def enqueue_delivery(attempt_id: int, *, run_after: datetime | None = None) -> None:
    """Queue a delivery of a pending submission."""
    enqueue_when(deliver_submission, attempt_id, run_after=run_after)


def enqueue_results_fetch(attempt_id: int, *, run_after: datetime | None = None) -> None:
    """Queue a fetch of a submitted attempt's results."""
    enqueue_when(fetch_results, attempt_id, run_after=run_after)
