"""Background tasks (django-tasks, database queue): making read-aloud audio."""

from datetime import datetime

from django_tasks import task

from ops.request_context import carries_request_id
from ops.tasks import enqueue_when


@task(queue_name="media")
@carries_request_id
def make_recording(recording_id: int) -> None:
    """Make the audio of one recording if it is due."""
    from speech.making import recording_make

    recording_make(recording_id)


def enqueue_making(recording_id: int, *, run_after: datetime | None = None) -> None:
    """Queue the making of one recording, now or when its next try is due."""
    enqueue_when(make_recording, recording_id, run_after=run_after)
