"""Housekeeping: finished task results, old upstream failures and expired cache rows, pruned."""

from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from ops.cache_fallback import delete_expired
from partner_api.models import UpstreamFailure

# Deleted in batches, so that a first sweep over years of rows holds no long lock.
BATCH = 5000


def prune_old_rows(now=None) -> dict[str, int]:
    """Delete finished task results and upstream failures older than their settings' days.

    Only results that finished (successfully or not) go: one waiting or running is the
    worker's and is never touched, however old. Returns how many of each were deleted.
    """
    now = now or timezone.now()
    task_cutoff = now - timedelta(days=settings.TASK_RESULTS_KEEP_DAYS)
    failure_cutoff = now - timedelta(days=settings.UPSTREAM_FAILURES_KEEP_DAYS)
    return {
        "task_results": _delete_in_batches(
            DBTaskResult.objects.finished().filter(finished_at__lt=task_cutoff)
        ),
        "upstream_failures": _delete_in_batches(
            UpstreamFailure.objects.filter(at__lt=failure_cutoff)
        ),
        # What the cache kept in the database during a Redis outage, once its time is up.
        "cache_rows": delete_expired(),
    }


def _delete_in_batches(queryset) -> int:
    deleted = 0
    while True:
        ids = list(queryset.order_by().values_list("pk", flat=True)[:BATCH])
        if not ids:
            return deleted
        count, _ = queryset.model.objects.filter(pk__in=ids).delete()
        deleted += count
