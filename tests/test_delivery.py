"""Durable submission: exactly once, through faults, restarts and concurrent clicks."""

import threading
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connections
from django.test import Client
from django.utils import timezone

from assessments import delivery
from assessments.delivery import attempts_sweep
from assessments.models import AssessmentAttempt
from assessments.services import AttemptClosed
from tests.journeys import attempt_url, page_showing, ready_to_send, register_pupil
from tests.workers import run_db_worker

State = AssessmentAttempt.State


@pytest.fixture
def pupil(upstream, staff):
    return register_pupil(staff)


def sweep_later():
    """Run the sweep as if the backoff had passed (the immediate backend runs what it queues)."""
    AssessmentAttempt.objects.filter(next_attempt_at__isnull=False).update(
        next_attempt_at=timezone.now() - timedelta(seconds=1)
    )
    return attempts_sweep()


def submissions(upstream) -> int:
    """Count accepted submissions, failing if any was posted again after being accepted."""
    resent = [
        status
        for _method, endpoint, status in upstream.state.requests
        if endpoint == "submit-assessment" and status == 409
    ]
    assert resent == [], "a submission was posted again after it had been accepted"
    return upstream.state.submissions_count()


@pytest.mark.django_db
@pytest.mark.parametrize("fault", ["503", "502", "504", "429", "500", "drop", "processed_500"])
def test_an_ambiguous_failure_keeps_the_answers_and_delivers_them_once_later(
    client, pupil, upstream, fault
):
    attempt = ready_to_send(client, pupil)
    upstream.state.faults.add("submit-assessment", fault, times=1)

    response = client.post(attempt_url(attempt, "submit/"))

    attempt.refresh_from_db()
    assert attempt.state == State.SUBMIT_PENDING
    assert attempt.answers.count() == len(attempt.questions)
    page = client.get(response.url).content.decode()
    assert "Your answers are saved and will be sent" in page
    assert attempt.next_attempt_at > timezone.now()

    assert sweep_later()["deliveries"] == 1
    attempt.refresh_from_db()
    assert attempt.state == State.COMPLETED
    assert submissions(upstream) == 1
    results = page_showing(client, response.url, '<h2 id="results-heading">')
    assert "Your answers are saved" not in results


@pytest.mark.django_db
def test_a_submission_that_arrived_is_completed_without_sending_it_again(client, pupil, upstream):
    attempt = ready_to_send(client, pupil)
    upstream.state.faults.add("submit-assessment", "processed_500", times=1)
    client.post(attempt_url(attempt, "submit/"))

    sweep_later()

    attempt.refresh_from_db()
    assert attempt.state == State.COMPLETED
    assert upstream.state.count(endpoint="submit-assessment") == 1


@pytest.mark.django_db
def test_a_pending_submission_is_not_retried_before_its_backoff(client, pupil, upstream):
    attempt = ready_to_send(client, pupil)
    upstream.state.faults.add("submit-assessment", "503", times=1)
    client.post(attempt_url(attempt, "submit/"))

    assert attempts_sweep()["deliveries"] == 0
    assert upstream.state.count(endpoint="submit-assessment") == 1
    attempt.refresh_from_db()
    assert attempt.state == State.SUBMIT_PENDING


@pytest.mark.django_db
def test_each_failed_delivery_waits_longer(client, pupil, upstream):
    attempt = ready_to_send(client, pupil)
    upstream.state.faults.add("submit-assessment", "503")
    client.post(attempt_url(attempt, "submit/"))
    attempt.refresh_from_db()
    first_wait = attempt.next_attempt_at - timezone.now()

    sweep_later()

    attempt.refresh_from_db()
    assert attempt.state == State.SUBMIT_PENDING and attempt.delivery_attempts == 2
    assert attempt.next_attempt_at - timezone.now() > first_wait
    assert submissions(upstream) == 0


@pytest.mark.django_db
def test_a_refused_submission_is_not_sent_again(client, pupil, upstream):
    attempt = ready_to_send(client, pupil)
    upstream.state.faults.add("submit-assessment", "expired_session", times=1)
    client.post(attempt_url(attempt, "submit/"))

    sweep_later()

    attempt.refresh_from_db()
    assert attempt.state == State.REJECTED
    assert upstream.state.count(endpoint="submit-assessment") == 1


@pytest.mark.django_db
def test_a_submission_left_submitting_by_a_dead_process_is_recovered(client, pupil, upstream):
    attempt = ready_to_send(client, pupil)
    # As if the process died right after claiming the attempt, before any call.
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(
        state=State.SUBMITTING,
        state_changed_at=timezone.now() - timedelta(seconds=settings.SUBMISSION_STUCK_AFTER + 1),
    )
    page = client.get(attempt_url(attempt, "results/")).content.decode()
    assert "being sent" in page

    counts = attempts_sweep()

    assert counts["unstuck"] == 1
    attempt.refresh_from_db()
    assert attempt.state == State.COMPLETED
    assert submissions(upstream) == 1


@pytest.mark.django_db
def test_missing_results_are_fetched_later(client, pupil, upstream):
    attempt = ready_to_send(client, pupil)
    upstream.state.faults.add("results", "503")
    response = client.post(attempt_url(attempt, "submit/"))
    attempt.refresh_from_db()
    assert attempt.state == State.SUBMITTED
    page = client.get(response.url).content.decode()
    assert "Your results are not ready yet" in page

    upstream.state.faults.clear()
    assert sweep_later()["results"] == 1

    attempt.refresh_from_db()
    assert attempt.state == State.COMPLETED
    assert submissions(upstream) == 1


@pytest.mark.django_db
def test_check_for_results_fetches_them_when_the_learner_asks(client, pupil, upstream):
    attempt = ready_to_send(client, pupil)
    upstream.state.faults.add("results", "500", times=1)
    response = client.post(attempt_url(attempt, "submit/"))
    calls = upstream.state.count(endpoint="results")
    client.get(response.url)
    assert upstream.state.count(endpoint="results") == calls  # a GET never calls upstream

    client.post(response.url)

    attempt.refresh_from_db()
    assert attempt.state == State.COMPLETED


def _concurrently(count: int, action) -> list:
    """Run `action` in `count` threads released together; return what each returned or raised."""
    barrier = threading.Barrier(count)
    outcomes: list = [None] * count

    def run(index: int) -> None:
        try:
            barrier.wait()
            outcomes[index] = action()
        except Exception as error:  # collected for the assertions
            outcomes[index] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return outcomes


@pytest.mark.backend  # select_for_update in threads
@pytest.mark.django_db(transaction=True)
def test_two_tabs_and_a_double_click_send_the_answers_once(staff, upstream):
    pupil = register_pupil(staff)
    attempt = ready_to_send(Client(), pupil)
    # A slow upstream keeps the first submission in flight while the others arrive.
    upstream.state.faults.add("submit-assessment", "latency", ms=300)

    outcomes = _concurrently(
        4, lambda: delivery.attempt_submit(attempt=AssessmentAttempt.objects.get(pk=attempt.pk))
    )

    assert sum(isinstance(o, AssessmentAttempt) for o in outcomes) == 1
    assert sum(isinstance(o, AttemptClosed) for o in outcomes) == 3, outcomes
    assert upstream.state.count(endpoint="submit-assessment") == 1
    assert AssessmentAttempt.objects.get(pk=attempt.pk).state == State.COMPLETED


@pytest.mark.backend  # select_for_update in threads
@pytest.mark.django_db(transaction=True)
def test_two_workers_deliver_a_pending_submission_once(staff, upstream):
    pupil = register_pupil(staff)
    attempt = ready_to_send(Client(), pupil)
    upstream.state.faults.add("submit-assessment", "503", times=1)
    delivery.attempt_submit(attempt=attempt)
    upstream.state.faults.add("submit-assessment", "latency", ms=300)

    outcomes = _concurrently(4, lambda: delivery.attempt_deliver(attempt_id=attempt.pk, force=True))

    assert sum(o is not None for o in outcomes) == 1, outcomes
    assert submissions(upstream) == 1
    assert AssessmentAttempt.objects.get(pk=attempt.pk).state == State.COMPLETED


@pytest.mark.backend  # the database task queue's claims
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_delivers_a_pending_submission(staff, upstream, settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    settings.DELIVERY_RETRY_BASE = 1
    pupil = register_pupil(staff)
    attempt = ready_to_send(Client(), pupil)
    upstream.state.faults.add("submit-assessment", "503", times=1)
    delivery.attempt_submit(attempt=attempt)
    attempt.refresh_from_db()
    assert attempt.state == State.SUBMIT_PENDING
    time.sleep(1.2)  # the queued delivery becomes due

    worker = run_db_worker(upstream.base_url)

    assert worker.returncode == 0, worker.stderr[-2000:]
    attempt.refresh_from_db()
    assert attempt.state == State.COMPLETED, worker.stderr[-2000:]
    assert submissions(upstream) == 1


@pytest.mark.django_db
def test_an_accepted_submission_is_never_sent_again_however_long_the_results_take(
    client, pupil, upstream, staff
):
    attempt = ready_to_send(client, pupil)
    upstream.state.faults.add("results", "error", status=404)
    client.post(attempt_url(attempt, "submit/"))
    page = client.get(attempt_url(attempt, "results/")).content.decode()
    assert "has not made the results available yet" in page

    for _ in range(8):
        sweep_later()
        client.post(attempt_url(attempt, "results/"))  # "Check for results"

    attempt.refresh_from_db()
    assert attempt.state == State.SUBMITTED
    assert upstream.state.count(endpoint="submit-assessment") == 1
    staff_client = Client()
    staff_client.force_login(staff)
    assert "Sent, no results yet" in staff_client.get("/operations/").content.decode()
    upstream.state.faults.clear()
    sweep_later()
    attempt.refresh_from_db()
    assert attempt.state == State.COMPLETED


def test_a_stale_copy_never_undoes_a_completed_attempt(client, pupil, upstream, db):
    attempt = ready_to_send(client, pupil)
    stale = AssessmentAttempt.objects.get(pk=attempt.pk)
    client.post(attempt_url(attempt, "submit/"))
    assert AssessmentAttempt.objects.get(pk=attempt.pk).state == State.COMPLETED

    # A request still holding the old copy asks for results and records a failure.
    stale.state = State.SUBMITTED
    upstream.state.faults.add("results", "503", times=1)
    delivery.attempt_fetch_results(attempt=stale)

    assert AssessmentAttempt.objects.get(pk=attempt.pk).state == State.COMPLETED


@pytest.mark.django_db
def test_try_sending_now_waits_a_moment_after_a_failed_send(client, pupil, upstream, settings):
    settings.SUBMISSION_QUIET_PERIOD = 20
    attempt = ready_to_send(client, pupil)
    upstream.state.faults.add("submit-assessment", "503", times=1)
    client.post(attempt_url(attempt, "submit/"))

    page = client.post(attempt_url(attempt, "resend/"), follow=True).content.decode()

    assert "please try again in a minute" in page
    assert upstream.state.count(endpoint="submit-assessment") == 1
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(
        state_changed_at=timezone.now() - timedelta(seconds=21)
    )
    client.post(attempt_url(attempt, "resend/"))
    attempt.refresh_from_db()
    assert attempt.state == State.COMPLETED and submissions(upstream) == 1
