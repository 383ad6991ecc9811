"""A background task logs the id of the request that queued it, in a real worker too."""

import time

import pytest
from django.utils import timezone

from assessments.models import AssessmentAttempt
from assessments.tasks import enqueue_results_fetch
from ops.request_context import bound_request_id
from tests.factories import make_attempt
from tests.log_capture import console_output
from tests.workers import db_worker_running

State = AssessmentAttempt.State

DATABASE_TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default", "imports", "media"],
    }
}
WORKER_TIMEOUT = 90  # seconds: the machine may be loaded


def submitted_attempt(learner) -> AssessmentAttempt:
    """An attempt the upstream accepted, whose results are still to be fetched."""
    attempt = make_attempt(learner, state=State.SUBMITTED)
    attempt.submitted_at = timezone.now()
    attempt.save(update_fields=["submitted_at"])
    return attempt


@pytest.mark.django_db
def test_a_task_run_at_once_logs_the_id_of_the_request_that_queued_it(learner, upstream):
    attempt = submitted_attempt(learner)
    with console_output() as output, bound_request_id("req-from-a-page-42"):
        enqueue_results_fetch(attempt.pk)
    task_lines = output.lines_of("assessments.delivery") + output.lines_of("portal.partner_api")
    assert task_lines, output.text
    assert {line["request_id"] for line in task_lines} == {"req-from-a-page-42"}


@pytest.mark.backend  # the database task queue, read by a second process
@pytest.mark.django_db(transaction=True)
def test_a_worker_logs_the_id_of_the_request_that_queued_the_task(settings, learner, upstream):
    settings.TASKS = DATABASE_TASKS
    attempt = submitted_attempt(learner)
    with bound_request_id("req-queued-by-page-7"):
        enqueue_results_fetch(attempt.pk)
    with db_worker_running(upstream.base_url, env={"LOG_FORMAT": "json"}) as worker:
        deadline = time.monotonic() + WORKER_TIMEOUT
        while "portal.partner_api" not in worker.output() and time.monotonic() < deadline:
            time.sleep(0.2)
        output = worker.output(last=20_000)
    call_lines = [line for line in output.splitlines() if '"portal.partner_api"' in line]
    assert call_lines, output
    assert all('"request_id": "req-queued-by-page-7"' in line for line in call_lines), output
