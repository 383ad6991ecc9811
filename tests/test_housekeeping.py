"""Housekeeping: finished task results and old upstream failures go; work under way stays."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from partner_api.models import UpstreamFailure

pytestmark = pytest.mark.django_db


def task_result(status: str, *, days_ago: float, finished: bool = True) -> DBTaskResult:
    """A task result row as django-tasks-db writes it, `days_ago` old."""
    at = timezone.now() - timedelta(days=days_ago)
    row = DBTaskResult.objects.create(
        status=status,
        args_kwargs={"args": [], "kwargs": {}},
        task_path="assessments.tasks.deliver_attempt",
        queue_name="default",
        backend_name="default",
        run_after=at,
        started_at=None if status == "READY" else at,
        finished_at=at if finished else None,
        exception_class_path="",
        traceback="",
    )
    DBTaskResult.objects.filter(pk=row.pk).update(enqueued_at=at)
    return row


def failure(days_ago: float) -> UpstreamFailure:
    return UpstreamFailure.objects.create(
        endpoint="results",
        method="GET",
        outcome="503",
        status=503,
        at=timezone.now() - timedelta(days=days_ago),
    )


def sweep() -> str:
    out = StringIO()
    call_command("sweep_housekeeping", stdout=out)
    return out.getvalue()


def test_old_finished_task_results_are_pruned_and_recent_ones_kept(settings):
    settings.TASK_RESULTS_KEEP_DAYS = 14
    old_ok = task_result("SUCCESSFUL", days_ago=15)
    old_failed = task_result("FAILED", days_ago=20)
    recent = task_result("SUCCESSFUL", days_ago=13)

    assert "2 finished task results" in sweep()

    assert set(DBTaskResult.objects.values_list("pk", flat=True)) == {recent.pk}
    assert not DBTaskResult.objects.filter(pk__in=[old_ok.pk, old_failed.pk]).exists()


def test_waiting_and_running_tasks_stay_however_old(settings):
    settings.TASK_RESULTS_KEEP_DAYS = 1
    waiting = task_result("READY", days_ago=90, finished=False)
    running = task_result("RUNNING", days_ago=90, finished=False)

    assert sweep().strip() == "Nothing to do."

    assert DBTaskResult.objects.filter(pk__in=[waiting.pk, running.pk]).count() == 2


def test_old_upstream_failures_are_pruned_after_their_own_setting(settings):
    settings.UPSTREAM_FAILURES_KEEP_DAYS = 30
    settings.TASK_RESULTS_KEEP_DAYS = 1
    old, recent = failure(days_ago=31), failure(days_ago=29)

    assert "1 upstream failures deleted" in sweep()

    assert list(UpstreamFailure.objects.values_list("pk", flat=True)) == [recent.pk]
    assert not UpstreamFailure.objects.filter(pk=old.pk).exists()
