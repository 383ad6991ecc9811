"""Honest pages when the upstream is down, and the staff operations view."""

import re
import time

import pytest
from django.test import Client
from django.utils.html import escape

from assessments.models import AssessmentAttempt
from partner_api.models import UpstreamFailure
from tests.journeys import attempt_url, page_showing, ready_to_send, register_pupil

State = AssessmentAttempt.State
BANNER = "The assessment service is unavailable at the moment."
MY_ASSESSMENTS = "<h1>My assessments</h1>"


@pytest.fixture
def breaker(settings):
    """A circuit breaker that opens after two failed calls."""
    settings.PARTNER_API_BREAKER_THRESHOLD = 2
    settings.PARTNER_API_BREAKER_COOLDOWN = 60


@pytest.fixture
def pupil(upstream, staff):
    return register_pupil(staff)


@pytest.mark.django_db
def test_after_repeated_failures_pages_fail_fast_with_a_banner_and_stored_pages_still_work(
    client, pupil, upstream, breaker, staff
):
    attempt = ready_to_send(client, pupil)
    client.post(attempt_url(attempt, "submit/"))  # completed: results stored locally
    upstream.state.faults.add("next-assessment", "503")
    client.post("/me/start/")
    client.post("/me/start/")
    calls = upstream.state.count(endpoint="next-assessment")

    page = client.post("/me/start/", follow=True).content.decode()

    assert upstream.state.count(endpoint="next-assessment") == calls  # no call: fail fast
    assert BANNER in page
    assert "not trying it for a little while" in page
    results = client.get(attempt_url(attempt, "results/"))
    assert results.status_code == 200 and BANNER in results.content.decode()
    assert escape(attempt.result.trait_title) in results.content.decode()
    staff_client = Client()
    staff_client.force_login(staff)
    for path in ["/learners/", f"/learners/{pupil.pk}/", "/operations/"]:
        response = staff_client.get(path)
        assert response.status_code == 200 and BANNER in response.content.decode()


@pytest.mark.django_db
def test_after_an_outage_clears_the_learner_reads_one_message_saying_when_to_try_again(
    client, pupil, upstream, breaker
):
    upstream.state.faults.add("next-assessment", "503")
    client.force_login(pupil.user)
    client.post("/me/start/")
    client.post("/me/start/")  # the circuit opens for its 60 s cool-down
    upstream.state.faults.clear()  # the service is back; the portal waits out the cool-down

    page = client.post("/me/start/", follow=True).content.decode()

    assert page.count("unavailable at the moment") == 1
    assert "Try again in about 1 minute." in page
    assert 'class="messages"' not in page
    assert page.count('class="banner banner-warning"') == 1


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (3, "10 seconds"),
        (25, "30 seconds"),
        (50, "50 seconds"),
        (55, "1 minute"),
        (95, "2 minutes"),
    ],
)
def test_the_time_to_try_again_is_rounded_up_to_a_plain_wait(seconds, said):
    from datetime import timedelta

    from django.utils import timezone

    from partner_api.upstream import try_again_in

    until = timezone.now() + timedelta(seconds=seconds)
    assert try_again_in(until) == f"Try again in about {said}."


@pytest.mark.django_db
def test_no_banner_while_the_upstream_answers(client, pupil, breaker):
    client.force_login(pupil.user)

    response = client.get("/me/")

    assert response.status_code == 200
    assert "<h1>My assessments</h1>" in response.content.decode()  # the page, not an error
    assert BANNER not in response.content.decode()


@pytest.mark.django_db
def test_operations_lists_waiting_submissions_and_retries_them(client, pupil, upstream, staff):
    attempt = ready_to_send(client, pupil)
    upstream.state.faults.add("submit-assessment", "503", times=1)
    client.post(attempt_url(attempt, "submit/"))
    staff_client = Client()
    staff_client.force_login(staff)

    page = staff_client.get("/operations/").content.decode()

    assert "Waiting to be sent" in page and pupil.display_name in page
    assert "could not be reached" in page  # the last problem
    assert "submit-assessment" in page  # recent failures by endpoint
    assert UpstreamFailure.objects.filter(endpoint="submit-assessment", status=503).exists()

    response = staff_client.post(f"/operations/attempts/{attempt.pk}/retry/", follow=True)

    attempt.refresh_from_db()
    assert attempt.state == State.COMPLETED
    assert "is now: Completed" in response.content.decode()
    assert upstream.state.submissions_count() == 1
    assert "Nothing needs attention" in staff_client.get("/operations/").content.decode()


def failed_calls_shown(page: str, endpoint: str) -> int | None:
    """Read an endpoint's count from the operations page's failures table (None: no row)."""
    found = re.search(rf'<th scope="row">{endpoint}</th><td>([0-9,]+)</td>', page)
    return int(found.group(1).replace(",", "")) if found else None


@pytest.mark.django_db
def test_results_not_ready_yet_are_not_counted_as_failures(client, pupil, upstream, staff):
    from django.utils import timezone

    from assessments.delivery import attempts_sweep

    attempt = ready_to_send(client, pupil)
    upstream.state.faults.add("submit-assessment", "503", times=3)
    client.post(attempt_url(attempt, "submit/"))
    for _ in range(3):  # each delivery asks for the results first: 404, none there yet
        AssessmentAttempt.objects.filter(pk=attempt.pk).update(next_attempt_at=timezone.now())
        attempts_sweep()
    attempt.refresh_from_db()
    assert attempt.state == State.COMPLETED
    results_not_ready = [
        status for _, endpoint, status in upstream.state.requests if endpoint == "results"
    ]
    assert results_not_ready[:3] == [404, 404, 404]
    staff_client = Client()
    staff_client.force_login(staff)

    page = staff_client.get("/operations/").content.decode()

    assert failed_calls_shown(page, "submit-assessment") == 3  # the three 503s
    assert failed_calls_shown(page, "results") is None
    assert UpstreamFailure.objects.count() == 3


@pytest.mark.django_db
def test_failure_records_hold_no_secrets(client, pupil, upstream, settings):
    upstream.state.faults.add("next-assessment", "500", times=1)
    client.force_login(pupil.user)
    client.post("/me/start/")
    failure = UpstreamFailure.objects.get()
    text = " ".join(str(value) for value in vars(failure).values())
    assert failure.endpoint == "next-assessment" and "next-assessment" in text
    assert settings.PARTNER_API_KEY not in text
    assert pupil.upstream_user_id not in text


@pytest.mark.django_db
def test_the_banner_shows_when_another_process_found_the_service_down(client, pupil, settings):
    from datetime import timedelta

    from django.utils import timezone

    from partner_api import get_client
    from partner_api.models import UpstreamHealth

    # As the worker would publish it after its circuit opened.
    UpstreamHealth.objects.update_or_create(
        base_url=get_client().base_url,
        defaults={"unavailable_until": timezone.now() + timedelta(seconds=30)},
    )
    client.force_login(pupil.user)
    assert BANNER in client.get("/me/").content.decode()
    UpstreamHealth.objects.update(unavailable_until=timezone.now() - timedelta(seconds=1))
    assert BANNER not in page_showing(client, "/me/", MY_ASSESSMENTS)


@pytest.mark.django_db
def test_an_opened_circuit_is_published_for_other_processes_and_cleared_on_recovery(
    client, pupil, upstream, breaker, settings
):
    from partner_api.models import UpstreamHealth
    from partner_api.resilience import reset_circuit_breakers

    upstream.state.faults.add("next-assessment", "503", times=2)
    client.force_login(pupil.user)
    client.post("/me/start/")
    client.post("/me/start/")
    health = UpstreamHealth.objects.get(base_url=upstream.base_url)
    assert health.unavailable_until is not None

    settings.PARTNER_API_BREAKER_COOLDOWN = 0.01
    reset_circuit_breakers()
    upstream.state.faults.add("next-assessment", "503", times=2)
    client.post("/me/start/")
    client.post("/me/start/")  # opens again, now with a tiny cool-down
    time.sleep(0.05)
    client.post("/me/start/")  # the trial call succeeds and closes the circuit
    health.refresh_from_db()
    assert health.unavailable_until is None


@pytest.mark.django_db
def test_the_banner_reads_what_other_processes_published_at_most_every_few_seconds(
    client, pupil, settings, django_assert_num_queries
):
    from datetime import timedelta

    from django.core.cache import cache
    from django.utils import timezone

    from partner_api import get_client
    from partner_api.models import UpstreamHealth

    settings.UPSTREAM_HEALTH_CACHE_SECONDS = 2
    client.force_login(pupil.user)
    assert BANNER not in page_showing(client, "/me/", MY_ASSESSMENTS)
    # The worker finds the service down: pages within the next two seconds may not know yet.
    UpstreamHealth.objects.update_or_create(
        base_url=get_client().base_url,
        defaults={"unavailable_until": timezone.now() + timedelta(seconds=30)},
    )
    assert BANNER not in page_showing(client, "/me/", MY_ASSESSMENTS)
    cache.clear()  # as when the two seconds have passed
    assert BANNER in client.get("/me/").content.decode()
