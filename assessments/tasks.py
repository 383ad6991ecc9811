"""Background tasks (django-tasks, database queue): delivery and results fetch."""

from datetime import datetime

from django_tasks import task, task_backends


@task()
def deliver_submission(attempt_id: int) -> None:
    """Deliver a pending submission if it is due."""
    from assessments.delivery import attempt_deliver

    attempt_deliver(attempt_id=attempt_id)


@task()
def fetch_results(attempt_id: int) -> None:
    """Fetch the results of a submitted attempt if it has none yet."""
    from assessments.delivery import attempt_fetch_results_when_due

    attempt_fetch_results_when_due(attempt_id=attempt_id)


def enqueue_delivery(attempt_id: int, *, run_after: datetime | None = None) -> None:
    """Queue a delivery of a pending submission."""
    _enqueue(deliver_submission, attempt_id, run_after)


def enqueue_results_fetch(attempt_id: int, *, run_after: datetime | None = None) -> None:
    """Queue a fetch of a submitted attempt's results."""
    _enqueue(fetch_results, attempt_id, run_after)


def _enqueue(chosen_task, attempt_id: int, run_after: datetime | None) -> None:
    if run_after is not None and not task_backends[chosen_task.backend].supports_defer:
        # A backend that cannot defer (the immediate one in tests) would run it at once;
        # the sweep delivers it when it is due instead.
        return
    configured = chosen_task.using(run_after=run_after) if run_after else chosen_task
    # With the database queue the task row is written in the caller's transaction, so it
    # exists exactly when the state change that asked for it does.
    configured.enqueue(attempt_id)
