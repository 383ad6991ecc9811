"""Background tasks (django-tasks): fetching an answer picture."""

from datetime import datetime

from django_tasks import task

from ops.request_context import carries_request_id
from ops.tasks import enqueue_when


@task(queue_name="media")
@carries_request_id
def fetch_picture(picture_id: int) -> None:
    """Fetch, check and keep one answer picture unless it is ready."""
    from pictures.services import picture_fetch

    picture_fetch(picture_id)


def enqueue_picture_fetch(picture_id: int, *, run_after: datetime | None = None) -> None:
    """Queue fetching an answer picture."""
    enqueue_when(fetch_picture, picture_id, run_after=run_after)
