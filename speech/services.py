"""Read-aloud audio wanted, made and kept: the rules of the speech room."""

from collections.abc import Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from django_tasks import task_backends

from speech import tasks
from speech.models import Recording
from speech.selectors import text_hash

# A row left pending this long with no try made, or a retry this long overdue, lost its task (a
# worker died, a queue was emptied): the sweep queues it again. Shorter would queue twice what a
# busy worker is about to run.
LOST_AFTER = timedelta(minutes=10)


def recordings_wanted(texts: Iterable[str]) -> None:
    """Keep a row for each text in each of the portal's languages and queue its making."""
    wanted = {
        text_hash(text, language): (text, language)
        for text in dict.fromkeys(texts)
        if text and text.strip()
        for language, _name in settings.LANGUAGES
    }
    if not wanted:
        return
    known = set(Recording.objects.filter(text_hash__in=wanted).values_list("text_hash", flat=True))
    missing = [key for key in wanted if key not in known]
    if not missing:
        return
    # Two processes storing the same content at once both get here: the unique key keeps
    # one row, and the making claims it (speech.making), so a second task does nothing.
    Recording.objects.bulk_create(
        [Recording(text=wanted[key][0], language=wanted[key][1], text_hash=key) for key in missing],
        ignore_conflicts=True,
    )
    made = Recording.objects.filter(
        text_hash__in=missing, state=Recording.State.PENDING, tries=0
    ).values_list("pk", flat=True)
    for recording_id in made:
        tasks.enqueue_making(recording_id)


def recordings_retry_due(*, now: datetime | None = None) -> int:
    """Queue the making of recordings whose task was lost (or, without deferred tasks, is due)."""
    now = now or timezone.now()
    # A backend that can defer already holds each retry, queued for its time by the failed
    # try (speech.making): only one overdue by LOST_AFTER lost its task. A backend that
    # cannot defer never queued it (ops.tasks.enqueue_when): the sweep queues it once due.
    deferred = task_backends[tasks.make_recording.backend].supports_defer
    due = now - LOST_AFTER if deferred else now
    lost = list(
        Recording.objects.filter(
            Q(state__in=[Recording.State.PENDING, Recording.State.FAILED], next_try_at__lte=due)
            | Q(state=Recording.State.PENDING, next_try_at=None, created_at__lt=now - LOST_AFTER)
        ).values_list("pk", flat=True)
    )
    # Marked as queued now (and due), so the next sweep leaves them to this one's tasks.
    Recording.objects.filter(pk__in=lost).update(next_try_at=now)
    for recording_id in lost:
        tasks.enqueue_making(recording_id)
    return len(lost)
