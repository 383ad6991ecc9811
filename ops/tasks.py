"""Queueing background work (django-tasks) the same way in every app."""

from datetime import datetime

from django_tasks import task_backends

from ops.request_context import task_kwargs_with_request_id


def enqueue_when(chosen_task, *args: object, run_after: datetime | None = None) -> None:
    """Queue a task now, or at `run_after` if the backend can defer it (else the sweep will).

    A task marked with ops.request_context.carries_request_id is given the id of the request
    (or task) queueing it, so the worker's log lines for it name that request.
    """
    if run_after is not None and not task_backends[chosen_task.backend].supports_defer:
        # A backend that cannot defer (the immediate one in tests) would run it at once;
        # the app's sweep runs it when it is due instead.
        return
    configured = chosen_task.using(run_after=run_after) if run_after else chosen_task
    # With the database queue the task row is written in the caller's transaction, so it
    # exists exactly when the change that asked for it does.
    configured.enqueue(*args, **task_kwargs_with_request_id(chosen_task))
