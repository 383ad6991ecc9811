"""Answer pictures wanted, fetched and kept: the rules of the pictures room."""

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db.models import Q
from django.utils import timezone
from django_tasks import task_backends

from kit.icons import icon_symbol
from kit.retries import retry_delay
from partner_api.pictures import FetchRefused, fetch_picture, picture_fetchable
from pictures import tasks
from pictures.checking import NotAPicture, checked_picture
from pictures.models import Picture
from pictures.selectors import address_hash

logger = logging.getLogger(__name__)

# A queued fetch not run this long after it was due was lost (a worker died): the sweep
# queues it again. Shorter would queue twice what a busy worker is about to run.
LOST_AFTER = timedelta(minutes=5)
# A fetch claims its row for this long: far more than one fetch's deadline and decoding.
LEASE = timedelta(minutes=2)


def pictures_wanted(addresses: Iterable[str]) -> None:
    """Keep a row for each fetchable icon address not yet known and queue its fetch."""
    # A known icon name is shown as its symbol, and anything that is not an address the
    # portal may fetch shows nothing: neither is kept.
    by_hash = {
        address_hash(address): address
        for address in addresses
        if picture_fetchable(address) and icon_symbol(address) is None
    }
    if not by_hash:
        return
    known = set(
        Picture.objects.filter(address_hash__in=by_hash).values_list("address_hash", flat=True)
    )
    new = [key for key in by_hash if key not in known]
    if not new:
        return
    now = timezone.now()
    # Two requests storing the same content at once: the unique key keeps one row, and a
    # second fetch queued for it does no harm. A fetch never queued (the process died just
    # here) is queued by the sweep.
    Picture.objects.bulk_create(
        [Picture(address=by_hash[key], address_hash=key, next_try_at=now) for key in new],
        ignore_conflicts=True,
    )
    created = Picture.objects.filter(
        address_hash__in=new, state=Picture.State.PENDING, tries=0
    ).values_list("pk", flat=True)
    for picture_id in list(created):
        tasks.enqueue_picture_fetch(picture_id)


def picture_fetch(picture_id: int, *, now: datetime | None = None) -> None:
    """Fetch one picture, check it by decoding, and keep it; else record why and retry later."""
    now = now or timezone.now()
    # Claimed for the lease where due: a second task for the same row (the sweep's, a racing
    # store's) finds it taken and neither fetches nor starts a second chain of retries.
    claimed = (
        Picture.objects.filter(
            Q(next_try_at__isnull=True) | Q(next_try_at__lte=now),
            pk=picture_id,
            state__in=[Picture.State.PENDING, Picture.State.FAILED],
        )
        .exclude(state=Picture.State.FAILED, next_try_at__isnull=True)  # failed for good
        .update(next_try_at=now + LEASE)
    )
    if not claimed:
        return
    picture = Picture.objects.get(pk=picture_id)
    try:
        checked = checked_picture(fetch_picture(picture.address))
    except FetchRefused as refused:
        _failed(picture, str(refused), now=now, final=refused.final)
        return
    except NotAPicture as refused:
        _failed(picture, str(refused), now=now, final=True)
        return
    Picture.objects.filter(pk=picture.pk).update(
        state=Picture.State.READY,
        image=checked.image,
        content_type=checked.content_type,
        width=checked.width,
        height=checked.height,
        digest=checked.digest,
        fetched_at=now,
        next_try_at=None,
        last_error="",
    )


def pictures_retry_due(*, now: datetime | None = None) -> int:
    """Queue again each picture fetch whose queued task was lost; return how many.

    A picture failed for good (FAILED with no next try) is left alone.
    """
    now = now or timezone.now()
    # A backend that cannot defer never got the retry queued (ops.tasks.enqueue_when): the
    # sweep queues it once due. Otherwise the retry is queued for its time, and only a lost
    # one is queued again.
    deferred = task_backends[tasks.fetch_picture.backend].supports_defer
    due = now - LOST_AFTER if deferred else now
    lost = list(
        Picture.objects.filter(state__in=[Picture.State.PENDING, Picture.State.FAILED])
        .filter(Q(next_try_at__lte=due) | Q(state=Picture.State.PENDING, next_try_at__isnull=True))
        .values_list("pk", flat=True)
    )
    # Marked as queued now, so the next sweep leaves them to this one's tasks.
    Picture.objects.filter(pk__in=lost).update(next_try_at=now)
    for picture_id in lost:
        tasks.enqueue_picture_fetch(picture_id)
    return len(lost)


def _failed(picture: Picture, reason: str, *, now: datetime, final: bool) -> None:
    """Record a failed try (why, in a short sentence) and queue the next after a backoff.

    A final failure (an address refused, a file that is no picture) is never tried again:
    the answer shows its text alone.
    """
    tries = picture.tries + 1
    next_try_at = None if final else now + retry_delay(tries)
    updated = (
        Picture.objects.filter(pk=picture.pk)
        .exclude(state=Picture.State.READY)
        .update(
            state=Picture.State.FAILED,
            tries=tries,
            last_error=f"Not kept: {reason}."[:200],
            next_try_at=next_try_at,
        )
    )
    # The address is not logged: an upstream may put a token in it.
    logger.warning(
        "Answer picture %s not kept (try %s%s): %s",
        picture.pk,
        tries,
        ", not tried again" if final else "",
        reason,
    )
    if updated and next_try_at is not None:
        tasks.enqueue_picture_fetch(picture.pk, run_after=next_try_at)
