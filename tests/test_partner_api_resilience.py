"""Tests for the client's retries, circuit breaker and call listeners; time never really passes."""

import json
import logging
import random
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
import requests
import responses
from django.core.exceptions import ImproperlyConfigured

from partner_api import (
    CallRecord,
    NextAssessment,
    PartnerApiBadResponse,
    PartnerApiCircuitOpen,
    PartnerApiClient,
    PartnerApiError,
    PartnerApiRejected,
    PartnerApiServerError,
    PartnerApiUnavailable,
    Response,
    add_call_listener,
    get_client,
)
from partner_api.calls import remove_call_listener
from partner_api.client import upstream_status
from partner_api.resilience import RetryPolicy, UpstreamStatus, reset_circuit_breakers
from tests.partner_api_support import (
    API_KEY,
    BASE,
    CREATE_URL,
    LEARNER_ID,
    NEXT_URL,
    PASSWORD,
    RESULTS_URL,
    SUBMIT_URL,
    VIEW_URL,
    connection_refused,
    connection_reset,
    payload,
)

pytestmark = pytest.mark.usefixtures("without_failure_recording")

# Each failure the client may retry, as `responses` reply arguments.
RETRYABLE = {
    "connection refused": lambda: {"body": connection_refused()},
    "connection reset": lambda: {"body": connection_reset()},
    "connect timeout": lambda: {"body": requests.ConnectTimeout()},
    "read timeout": lambda: {"body": requests.ReadTimeout()},
    "429": lambda: {"status": 429, "json": {"error": "slow down"}},
    "502": lambda: {"status": 502, "body": "<h1>Bad gateway</h1>"},
    "503": lambda: {"status": 503, "json": {"error": "maintenance"}},
    "504": lambda: {"status": 504, "body": ""},
}

# Each GET endpoint: its URL, how to call it, and a good reply.
GETS = {
    "next-assessment": (NEXT_URL, lambda c: c.next_assessment(LEARNER_ID), "next_assessment.json"),
    "view-assessment": (
        VIEW_URL,
        lambda c: c.view_assessment(LEARNER_ID, 412),
        "view_assessment.json",
    ),
    "results": (RESULTS_URL, lambda c: c.results(LEARNER_ID, 412), "results.json"),
}


class FakeTime:
    """A monotonic clock that moves only when the client sleeps or a test says so."""

    def __init__(self) -> None:
        self.now = 5000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def advance(self, seconds: float) -> None:
        self.now += seconds


def highest(low: float, high: float) -> float:
    """Stand in for random.uniform, always drawing the top of the range."""
    return high


@pytest.fixture(autouse=True)
def closed_circuits() -> Iterator[None]:
    """Start and end every test with no failures held against any upstream."""
    reset_circuit_breakers()
    yield
    reset_circuit_breakers()


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def make_client(fake_time: FakeTime) -> Callable[..., PartnerApiClient]:
    """Build clients on the fake clock; options override the defaults of the settings."""

    def make(**options: Any) -> PartnerApiClient:
        options.setdefault("random", highest)
        return PartnerApiClient(
            BASE,
            API_KEY,
            timeout=(3.05, 10),
            sleep=fake_time.sleep,
            clock=fake_time.clock,
            **options,
        )

    return make


@pytest.fixture
def upstream() -> Iterator[responses.RequestsMock]:
    """Mock the upstream; every registered reply must be used."""
    with responses.RequestsMock() as mock:
        yield mock


@pytest.fixture
def records() -> Iterator[list[CallRecord]]:
    """Collect the record of every attempt while the test runs."""
    collected: list[CallRecord] = []
    add_call_listener(collected.append)
    yield collected
    remove_call_listener(collected.append)


def create(client: PartnerApiClient) -> Any:
    """Create the test learner, with its password."""
    return client.create_learner(username="ada.l", password=PASSWORD, dob=date(2008, 3, 9))


def submit(client: PartnerApiClient) -> Any:
    """Submit one answer for the test learner."""
    return client.submit_assessment(LEARNER_ID, "77", [Response("q-sleep-1", "a-1-1")])


def fail(
    call: Callable[[], Any],
    error_class: type[Exception] | tuple[type[Exception], ...] = PartnerApiError,
) -> Any:
    """Make a call that must fail and return its error."""
    with pytest.raises(error_class) as caught:
        call()
    return caught.value


# Retrying GETs --------------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", GETS)
@pytest.mark.parametrize("failure", RETRYABLE)
def test_it_retries_a_get_after_each_unavailable_failure_then_succeeds(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
    endpoint: str,
    failure: str,
) -> None:
    url, call, good = GETS[endpoint]
    upstream.get(url, **RETRYABLE[failure]())
    upstream.get(url, **RETRYABLE[failure]())
    upstream.get(url, json=payload(good))

    result = call(make_client())

    assert result is not None
    assert len(upstream.calls) == 3
    assert fake_time.sleeps == [0.25, 0.5]


def test_it_backs_off_exponentially_up_to_the_cap(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
) -> None:
    for _ in range(5):
        upstream.get(NEXT_URL, status=503)
    upstream.get(NEXT_URL, json=payload("next_assessment.json"))
    client = make_client(max_attempts=6, backoff=0.5, backoff_cap=1.5, retry_budget=30)

    client.next_assessment(LEARNER_ID)

    assert fake_time.sleeps == [0.5, 1.0, 1.5, 1.5, 1.5]


def test_it_draws_every_sleep_at_random_between_zero_and_the_backoff_ceiling(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
) -> None:
    draws: list[tuple[float, float]] = []
    generator = random.Random(20240611)

    def uniform(low: float, high: float) -> float:
        draws.append((low, high))
        return generator.uniform(low, high)

    upstream.get(NEXT_URL, status=503)
    client = make_client(
        random=uniform, max_attempts=40, backoff=0.25, backoff_cap=2, retry_budget=1000
    )

    fail(lambda: client.next_assessment(LEARNER_ID), PartnerApiUnavailable)

    ceilings = [min(2, 0.25 * 2**retry) for retry in range(39)]
    assert draws == [(0.0, ceiling) for ceiling in ceilings]
    assert all(
        0 <= slept <= ceiling for slept, ceiling in zip(fake_time.sleeps, ceilings, strict=True)
    )
    assert len(set(fake_time.sleeps)) > 30  # full jitter: the sleeps are spread, not fixed


def test_it_gives_up_after_the_last_attempt_with_the_last_error(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
) -> None:
    upstream.get(NEXT_URL, status=502, headers={"X-Request-Id": "r-1"})
    upstream.get(NEXT_URL, body=requests.ReadTimeout())
    upstream.get(NEXT_URL, status=504, headers={"X-Request-Id": "r-3"})
    upstream.get(NEXT_URL, status=503, headers={"X-Request-Id": "r-4"})

    error = fail(lambda: make_client().next_assessment(LEARNER_ID), PartnerApiUnavailable)

    assert (error.status, error.request_id) == (503, "r-4")
    assert len(upstream.calls) == 4
    assert fake_time.sleeps == [0.25, 0.5, 1.0]


def test_it_stops_retrying_when_the_time_budget_is_spent(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
) -> None:
    def slow_503(request: Any) -> tuple[int, dict[str, str], str]:
        fake_time.advance(0.3)  # each attempt takes 0.3 s
        return (503, {}, "")

    upstream.add_callback(responses.GET, NEXT_URL, callback=slow_503)
    client = make_client(retry_budget=1.0, backoff=0.4, backoff_cap=0.4, max_attempts=10)
    started = fake_time.now

    fail(lambda: client.next_assessment(LEARNER_ID), PartnerApiUnavailable)

    # 0.3 s attempt, 0.4 s sleep, then a second attempt with the 0.3 s that are left; after
    # it no sleep fits in the budget.
    assert len(upstream.calls) == 2
    assert fake_time.sleeps == [0.4]
    assert fake_time.now - started <= 1.0
    assert upstream.calls[1].request.req_kwargs["timeout"] == pytest.approx((0.3, 0.3))


def test_it_cuts_a_gets_timeout_to_the_budget_but_never_a_posts_first_one(
    make_client: Callable[..., PartnerApiClient], upstream: responses.RequestsMock
) -> None:
    upstream.get(NEXT_URL, json=payload("next_assessment.json"))
    upstream.post(CREATE_URL, json=payload("create_learner.json"))
    client = make_client(retry_budget=2)

    client.next_assessment(LEARNER_ID)
    create(client)

    assert upstream.calls[0].request.req_kwargs["timeout"] == (2.0, 2.0)
    assert upstream.calls[1].request.req_kwargs["timeout"] == (3.05, 10.0)


# Retry-After ----------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 503])
def test_it_waits_as_long_as_retry_after_asks(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
    status: int,
) -> None:
    upstream.get(RESULTS_URL, status=status, headers={"Retry-After": "3"})
    upstream.get(RESULTS_URL, json=payload("results.json"))

    make_client().results(LEARNER_ID, 412)

    assert fake_time.sleeps == [3.0]


def test_it_waits_for_a_retry_after_exactly_at_the_cap(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
) -> None:
    upstream.get(NEXT_URL, status=503, headers={"Retry-After": "5"})
    upstream.get(NEXT_URL, json=payload("next_assessment.json"))

    make_client(retry_after_cap=5).next_assessment(LEARNER_ID)

    assert fake_time.sleeps == [5.0]


def test_it_gives_up_at_once_when_retry_after_is_over_the_cap(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
) -> None:
    upstream.get(NEXT_URL, status=503, headers={"Retry-After": "120"})

    error = fail(
        lambda: make_client(retry_after_cap=5).next_assessment(LEARNER_ID), PartnerApiUnavailable
    )

    assert error.retry_after == 120.0  # kept for the caller, who may schedule a later try
    assert len(upstream.calls) == 1
    assert fake_time.sleeps == []


def test_it_gives_up_at_once_when_retry_after_would_pass_the_budget(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
) -> None:
    upstream.get(NEXT_URL, status=429, headers={"Retry-After": "4"})

    fail(
        lambda: make_client(retry_budget=3, retry_after_cap=5).next_assessment(LEARNER_ID),
        PartnerApiUnavailable,
    )

    assert len(upstream.calls) == 1
    assert fake_time.sleeps == []


# What is never retried ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "error_class"),
    [
        ({"status": 500, "json": {"error": "boom"}}, PartnerApiServerError),
        ({"status": 501}, PartnerApiServerError),
        ({"status": 400, "json": {"error": "bad"}}, PartnerApiRejected),
        ({"status": 404}, PartnerApiRejected),
        ({"status": 409}, PartnerApiRejected),
        ({"body": "<html>Maintenance</html>"}, PartnerApiBadResponse),
        ({"json": {"assessment_id": True}}, PartnerApiBadResponse),
        (
            {"status": 302, "headers": {"Location": "https://elsewhere.example/"}},
            PartnerApiBadResponse,
        ),
    ],
)
def test_it_does_not_retry_a_get_that_failed_for_good(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
    reply: dict[str, Any],
    error_class: type[Exception],
) -> None:
    upstream.get(NEXT_URL, **reply)

    fail(lambda: make_client().next_assessment(LEARNER_ID), error_class)

    assert len(upstream.calls) == 1
    assert fake_time.sleeps == []


@pytest.mark.parametrize(
    "failure", [connection_refused, requests.ConnectTimeout], ids=["refused", "connect timeout"]
)
def test_it_retries_creating_a_learner_when_the_request_never_left(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
    failure: Callable[[], Exception],
) -> None:
    upstream.post(CREATE_URL, body=failure())
    upstream.post(CREATE_URL, json=payload("create_learner.json"), status=201)

    learner = create(make_client())

    assert learner.user_id == LEARNER_ID
    assert len(upstream.calls) == 2
    assert fake_time.sleeps == [0.25]


@pytest.mark.parametrize(
    "reply",
    [
        {"body": requests.ReadTimeout()},
        {"body": connection_reset()},
        {"body": requests.ConnectionError("cause unknown")},
        {"status": 503, "headers": {"Retry-After": "1"}},
        {"status": 429},
        {"status": 502},
        {"status": 500},
    ],
    ids=["read timeout", "reset", "unknown", "503", "429", "502", "500"],
)
def test_it_does_not_retry_creating_a_learner_that_may_have_been_created(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
    reply: dict[str, Any],
) -> None:
    upstream.post(CREATE_URL, **reply)

    fail(lambda: create(make_client()))

    assert len(upstream.calls) == 1
    assert fake_time.sleeps == []


@pytest.mark.parametrize(
    "reply",
    [
        {"body": requests.ReadTimeout()},
        {"body": requests.ConnectTimeout()},
        {"body": connection_refused()},
        {"body": connection_reset()},
        {"status": 503, "headers": {"Retry-After": "1"}},
        {"status": 429},
        {"status": 500},
    ],
    ids=["read timeout", "connect timeout", "refused", "reset", "503", "429", "500"],
)
def test_it_never_resends_a_submission(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
    reply: dict[str, Any],
) -> None:
    upstream.post(SUBMIT_URL, **reply)

    fail(lambda: submit(make_client(max_attempts=10)))

    assert len(upstream.calls) == 1
    assert fake_time.sleeps == []


# Logging --------------------------------------------------------------------------------------


def test_it_logs_every_attempt_with_its_number_and_what_happens_next(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    upstream.get(NEXT_URL, status=503, headers={"X-Request-Id": "r-1", "Retry-After": "2"})
    upstream.get(NEXT_URL, body=requests.ReadTimeout())
    upstream.get(NEXT_URL, json=payload("next_assessment.json"), headers={"X-Request-Id": "r-3"})
    caplog.set_level(logging.INFO, logger="portal.partner_api")

    make_client().next_assessment(LEARNER_ID)

    lines = [r.getMessage() for r in caplog.records if r.name == "portal.partner_api"]
    assert len(lines) == 3
    assert lines[0].startswith("partner API next-assessment GET -> 503 in ")
    assert lines[0].endswith(
        " ms (attempt 1/4, request id r-1); retrying in 2.00 s (Retry-After 2 s)"
    )
    assert lines[1].startswith(
        "partner API next-assessment GET -> timed out waiting for a response in "
    )
    assert lines[1].endswith(" ms (attempt 2/4, request id -); retrying in 0.50 s (backoff)")
    assert lines[2].endswith(" ms (attempt 3/4, request id r-3)")
    levels = [r.levelno for r in caplog.records if r.name == "portal.partner_api"]
    assert levels == [logging.WARNING, logging.WARNING, logging.INFO]


def test_it_logs_why_it_did_not_retry(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    upstream.post(SUBMIT_URL, status=503)
    upstream.post(CREATE_URL, body=requests.ReadTimeout())
    upstream.get(NEXT_URL, status=503, headers={"Retry-After": "60"})
    upstream.get(VIEW_URL, json={"questions": []})
    caplog.set_level(logging.INFO, logger="portal.partner_api")
    client = make_client()

    fail(lambda: submit(client))
    fail(lambda: create(client))
    fail(lambda: client.next_assessment(LEARNER_ID))
    fail(lambda: client.view_assessment(LEARNER_ID, 412))

    lines = [r.getMessage() for r in caplog.records if r.name == "portal.partner_api"]
    assert lines[0].endswith(
        "(attempt 1/1, request id -); not retried: a submission is never resent by the client"
    )
    assert lines[1].endswith("; not retried: the request may have reached the upstream")
    assert lines[2].endswith("; giving up: Retry-After 60 s is over the 5 s cap")
    assert lines[3].endswith("(attempt 1/4, request id -); questions is empty")


def test_no_attempt_leaks_the_key_the_learnerid_or_the_password(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    records: list[CallRecord],
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The upstream echoes whatever it was sent; the password only ever goes to create-learner.
    echo = f"key {API_KEY} learner {LEARNER_ID}"
    created = f"key {API_KEY} password {PASSWORD}"
    upstream.get(NEXT_URL, status=429, json={"message": echo}, headers={"X-Request-Id": echo})
    upstream.get(NEXT_URL, status=502, json={"detail": {"learnerid": LEARNER_ID}})
    upstream.get(NEXT_URL, status=404, json={"error": echo}, headers={"Request-Id": echo})
    upstream.post(CREATE_URL, body=connection_refused())
    upstream.post(
        CREATE_URL, status=503, json={"error": created}, headers={"X-Request-Id": created}
    )
    upstream.post(SUBMIT_URL, status=500, json={"error": echo}, headers={"X-Request-Id": echo})
    caplog.set_level(logging.DEBUG)
    client = make_client(breaker_threshold=2)

    errors = [
        fail(lambda: client.next_assessment(LEARNER_ID)),
        fail(lambda: create(client)),
        fail(lambda: submit(client)),
        fail(lambda: client.next_assessment(LEARNER_ID)),  # the circuit is open by now
    ]

    assert isinstance(errors[-1], PartnerApiCircuitOpen)
    seen = [caplog.text, *(str(r.args) for r in caplog.records)]
    seen += [repr(record) for record in records]
    seen += [str(vars(error)) for error in errors]
    everything = "\n".join(seen)
    assert "attempt 2/4" in everything
    assert "[redacted]" in everything  # the echoes were there to leak
    for secret in (API_KEY, LEARNER_ID, PASSWORD):
        assert secret not in everything


# Circuit breaker ------------------------------------------------------------------------------


def open_the_circuit(
    client: PartnerApiClient, upstream: responses.RequestsMock, times: int
) -> None:
    """Fail `times` calls with 503 (the client must make one attempt per call)."""
    upstream.get(NEXT_URL, status=503)
    for _ in range(times):
        fail(lambda: client.next_assessment(LEARNER_ID), PartnerApiUnavailable)
    upstream.remove(responses.GET, NEXT_URL)


def test_it_fails_fast_without_sending_once_the_threshold_is_reached(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = make_client(max_attempts=1, breaker_threshold=3)
    open_the_circuit(client, upstream, 3)
    sent = len(upstream.calls)

    errors = [
        fail(lambda: client.next_assessment(LEARNER_ID), PartnerApiCircuitOpen),
        fail(lambda: client.view_assessment(LEARNER_ID, 412), PartnerApiCircuitOpen),
        fail(lambda: create(client), PartnerApiCircuitOpen),
        fail(lambda: submit(client), PartnerApiCircuitOpen),
    ]

    assert len(upstream.calls) == sent == 3
    error = errors[0]
    assert isinstance(error, PartnerApiUnavailable)
    assert str(error) == "next-assessment: assessment service marked unavailable (circuit open)"
    assert error.reached_upstream is False
    assert error.retry_after == 30.0
    assert error.open_until is not None
    assert str(errors[3]).startswith("submit-assessment: ")
    assert "partner API circuit opened after 3 consecutive failed calls" in caplog.text


def test_a_call_counts_once_however_many_attempts_it_made(
    make_client: Callable[..., PartnerApiClient], upstream: responses.RequestsMock
) -> None:
    upstream.get(NEXT_URL, status=503)
    client = make_client(max_attempts=4, breaker_threshold=2)

    fail(lambda: client.next_assessment(LEARNER_ID), PartnerApiUnavailable)

    assert len(upstream.calls) == 4
    assert client.upstream_status() == UpstreamStatus(True, None, 1)


def test_server_errors_count_toward_opening_the_circuit(
    make_client: Callable[..., PartnerApiClient], upstream: responses.RequestsMock
) -> None:
    upstream.get(RESULTS_URL, status=500)
    upstream.post(SUBMIT_URL, status=500)
    client = make_client(breaker_threshold=2)

    fail(lambda: client.results(LEARNER_ID, 412), PartnerApiServerError)
    fail(lambda: submit(client), PartnerApiServerError)

    fail(lambda: client.results(LEARNER_ID, 412), PartnerApiCircuitOpen)
    assert len(upstream.calls) == 2


@pytest.mark.parametrize(
    "reply",
    [{"status": 400}, {"status": 404}, {"status": 409}, {"status": 422}, {"body": "not json"}],
)
def test_refusals_and_unusable_answers_do_not_open_the_circuit(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    reply: dict[str, Any],
) -> None:
    upstream.get(NEXT_URL, **reply)
    client = make_client(breaker_threshold=2)

    for _ in range(5):
        fail(
            lambda: client.next_assessment(LEARNER_ID), (PartnerApiRejected, PartnerApiBadResponse)
        )

    assert len(upstream.calls) == 5
    assert client.upstream_status() == UpstreamStatus(True, None, 0)


def test_an_answer_resets_the_count_of_failures(
    make_client: Callable[..., PartnerApiClient], upstream: responses.RequestsMock
) -> None:
    for reply in ({"status": 503}, {"status": 503}, {"json": payload("next_assessment.json")}):
        upstream.get(NEXT_URL, **reply)
    client = make_client(max_attempts=1, breaker_threshold=3)

    fail(lambda: client.next_assessment(LEARNER_ID))
    fail(lambda: client.next_assessment(LEARNER_ID))
    client.next_assessment(LEARNER_ID)
    upstream.replace(responses.GET, NEXT_URL, status=503)
    fail(lambda: client.next_assessment(LEARNER_ID), PartnerApiUnavailable)
    fail(lambda: client.next_assessment(LEARNER_ID), PartnerApiUnavailable)

    assert client.upstream_status() == UpstreamStatus(True, None, 2)


def test_it_lets_one_trial_call_through_after_the_cool_down_and_closes_on_success(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
) -> None:
    client = make_client(max_attempts=1, breaker_threshold=2, breaker_cooldown=30)
    open_the_circuit(client, upstream, 2)
    fake_time.advance(29)
    fail(lambda: client.next_assessment(LEARNER_ID), PartnerApiCircuitOpen)
    fake_time.advance(1)
    during_trial: list[PartnerApiError] = []

    def trial_reply(request: Any) -> tuple[int, dict[str, str], str]:
        # While the trial is out, every other call still fails fast, without being sent.
        if not during_trial:
            during_trial.append(fail(lambda: client.results(LEARNER_ID, 412)))
        return (200, {}, json.dumps(payload("next_assessment.json")))

    upstream.add_callback(responses.GET, NEXT_URL, callback=trial_reply)

    assert isinstance(client.next_assessment(LEARNER_ID), NextAssessment)
    assert [type(error) for error in during_trial] == [PartnerApiCircuitOpen]
    assert during_trial[0].open_until is None
    client.next_assessment(LEARNER_ID)  # closed again: calls go through
    assert len(upstream.calls) == 2 + 2
    assert client.upstream_status() == UpstreamStatus(True, None, 0)


def test_a_failed_trial_opens_the_circuit_for_another_cool_down(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = make_client(max_attempts=1, breaker_threshold=2, breaker_cooldown=30)
    open_the_circuit(client, upstream, 2)
    fake_time.advance(30)
    upstream.get(NEXT_URL, body=requests.ConnectTimeout())

    fail(lambda: client.next_assessment(LEARNER_ID), PartnerApiUnavailable)
    fake_time.advance(29)
    error = fail(lambda: client.next_assessment(LEARNER_ID), PartnerApiCircuitOpen)
    assert error.retry_after == pytest.approx(1.0)
    fake_time.advance(1)
    fail(lambda: client.next_assessment(LEARNER_ID), PartnerApiUnavailable)  # the next trial

    assert len(upstream.calls) == 2 + 2
    assert "partner API circuit reopened after 4 consecutive failed calls" in caplog.text


def test_only_one_of_many_threads_makes_the_trial_call(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
) -> None:
    client = make_client(max_attempts=1, breaker_threshold=1, breaker_cooldown=5)
    open_the_circuit(client, upstream, 1)
    fake_time.advance(5)
    others_done = threading.Event()

    def slow_success(request: Any) -> tuple[int, dict[str, str], str]:
        others_done.wait(timeout=5)
        return (200, {}, json.dumps(payload("next_assessment.json")))

    upstream.add_callback(responses.GET, NEXT_URL, callback=slow_success)
    outcomes: list[str] = []
    lock = threading.Lock()

    def call() -> None:
        try:
            client.next_assessment(LEARNER_ID)
            outcome = "sent"
        except PartnerApiCircuitOpen:
            outcome = "failed fast"
        with lock:
            outcomes.append(outcome)
            if outcomes.count("failed fast") == 7:
                others_done.set()

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)

    assert sorted(outcomes) == ["failed fast"] * 7 + ["sent"]
    assert len(upstream.calls) == 1 + 1


def test_a_trial_that_ends_in_an_unexpected_exception_leaves_the_next_call_to_try(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
) -> None:
    client = make_client(max_attempts=1, breaker_threshold=1)
    open_the_circuit(client, upstream, 1)
    fake_time.advance(30)
    upstream.add_callback(responses.GET, NEXT_URL, callback=lambda request: RuntimeError("bug"))

    with pytest.raises(RuntimeError):
        client.next_assessment(LEARNER_ID)
    upstream.replace(responses.GET, NEXT_URL, json=payload("next_assessment.json"))

    client.next_assessment(LEARNER_ID)
    assert client.upstream_status().available


def test_a_breaker_threshold_of_zero_never_opens_the_circuit(
    make_client: Callable[..., PartnerApiClient], upstream: responses.RequestsMock
) -> None:
    upstream.get(NEXT_URL, status=503)
    client = make_client(max_attempts=1, breaker_threshold=0)

    for _ in range(20):
        fail(lambda: client.next_assessment(LEARNER_ID), PartnerApiUnavailable)

    assert len(upstream.calls) == 20
    assert client.upstream_status().available


def test_clients_of_the_same_upstream_share_one_circuit(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
) -> None:
    first = make_client(max_attempts=1, breaker_threshold=2)
    open_the_circuit(first, upstream, 2)
    rebuilt = PartnerApiClient(
        "HTTPS://Partner.Example/", "another-key", timeout=5, clock=fake_time.clock
    )
    elsewhere = PartnerApiClient("https://other.example", API_KEY, clock=fake_time.clock)
    upstream.get("https://other.example/plapi/v1/partners/assessments/next-assessment", json={})

    fail(lambda: rebuilt.next_assessment(LEARNER_ID), PartnerApiCircuitOpen)
    elsewhere.next_assessment(LEARNER_ID)


# Upstream status ------------------------------------------------------------------------------


def test_upstream_status_follows_the_circuit_of_the_configured_upstream(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    fake_time: FakeTime,
    settings: Any,
) -> None:
    settings.PARTNER_API_BASE_URL = "https://partner.example/"
    client = make_client(max_attempts=1, breaker_threshold=2, breaker_cooldown=30)
    assert upstream_status() == UpstreamStatus(True, None, 0)

    upstream.get(NEXT_URL, status=503)
    fail(lambda: client.next_assessment(LEARNER_ID))
    assert upstream_status() == UpstreamStatus(True, None, 1)

    before = datetime.now(UTC)
    fail(lambda: client.next_assessment(LEARNER_ID))
    status = upstream_status()
    after = datetime.now(UTC)
    assert (status.available, status.consecutive_failures) == (False, 2)
    assert before + timedelta(seconds=30) <= status.open_until <= after + timedelta(seconds=30)

    fake_time.advance(30)
    assert upstream_status() == UpstreamStatus(True, None, 2)  # the next call is the trial


def test_upstream_status_knows_nothing_of_an_upstream_never_called(settings: Any) -> None:
    settings.PARTNER_API_BASE_URL = "https://never-called.example"

    assert upstream_status() == UpstreamStatus(
        available=True, open_until=None, consecutive_failures=0
    )


# Call listeners -------------------------------------------------------------------------------


def test_listeners_get_a_record_of_every_attempt(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    records: list[CallRecord],
) -> None:
    upstream.get(NEXT_URL, status=503, headers={"X-Request-Id": "r-1"})
    upstream.get(NEXT_URL, body=requests.ReadTimeout())
    upstream.get(NEXT_URL, json=payload("next_assessment.json"), headers={"X-Request-Id": "r-3"})
    started = datetime.now(UTC)

    make_client().next_assessment(LEARNER_ID)

    summary = [
        (r.endpoint, r.method, r.outcome, r.status, r.ok, r.attempt, r.request_id) for r in records
    ]
    assert summary == [
        ("next-assessment", "GET", "503", 503, False, 1, "r-1"),
        ("next-assessment", "GET", "timed out waiting for a response", None, False, 2, None),
        ("next-assessment", "GET", "200", 200, True, 3, "r-3"),
    ]
    assert [type(r.error) for r in records] == [
        PartnerApiUnavailable,
        PartnerApiUnavailable,
        type(None),
    ]
    assert all(isinstance(r.latency_ms, int) and r.latency_ms >= 0 for r in records)
    assert all(started <= r.at <= datetime.now(UTC) for r in records)


def test_listeners_hear_of_calls_refused_by_the_open_circuit(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    records: list[CallRecord],
) -> None:
    client = make_client(max_attempts=1, breaker_threshold=1)
    open_the_circuit(client, upstream, 1)

    fail(lambda: client.results(LEARNER_ID, 412), PartnerApiCircuitOpen)

    refused = records[-1]
    assert (refused.endpoint, refused.outcome, refused.ok, refused.attempt) == (
        "results",
        "circuit open",
        False,
        0,
    )
    assert isinstance(refused.error, PartnerApiCircuitOpen)


def test_a_listener_that_raises_does_not_break_the_call(
    make_client: Callable[..., PartnerApiClient],
    upstream: responses.RequestsMock,
    records: list[CallRecord],
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken_listener(record: CallRecord) -> None:
        raise RuntimeError("the database is gone")

    upstream.get(NEXT_URL, status=503)
    upstream.get(NEXT_URL, json=payload("next_assessment.json"))
    add_call_listener(broken_listener)
    try:
        result = make_client().next_assessment(LEARNER_ID)
    finally:
        remove_call_listener(broken_listener)

    assert isinstance(result, NextAssessment)
    assert len(records) == 2  # the other listener still heard both attempts
    assert "partner API call listener" in caplog.text
    assert "broken_listener failed; ignored" in caplog.text


def test_a_removed_listener_hears_nothing_more(
    make_client: Callable[..., PartnerApiClient], upstream: responses.RequestsMock
) -> None:
    heard: list[CallRecord] = []
    upstream.get(NEXT_URL, json=payload("next_assessment.json"))
    client = make_client()
    add_call_listener(heard.append)
    add_call_listener(heard.append)  # adding twice does not double the records
    client.next_assessment(LEARNER_ID)
    remove_call_listener(heard.append)

    client.next_assessment(LEARNER_ID)

    assert len(heard) == 1


# Configuration --------------------------------------------------------------------------------


def test_the_client_defaults_to_the_documented_policy() -> None:
    client = PartnerApiClient(BASE, API_KEY, timeout=(3.05, 10))

    assert client.retry_policy == RetryPolicy(
        max_attempts=4, budget=10, backoff=0.25, backoff_cap=2, retry_after_cap=5
    )
    assert (client.breaker_threshold, client.breaker_cooldown) == (5, 30)


@pytest.mark.parametrize(
    "options",
    [
        {"max_attempts": 0},
        {"max_attempts": 1.5},
        {"retry_budget": 0},
        {"backoff": -1},
        {"retry_after_cap": float("inf")},
        {"breaker_threshold": -1},
        {"breaker_cooldown": 0},
    ],
)
def test_it_refuses_unusable_retry_or_breaker_options(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        PartnerApiClient(BASE, API_KEY, **options)


def test_get_client_applies_the_retry_and_breaker_settings(settings: Any) -> None:
    settings.PARTNER_API_BASE_URL = BASE
    settings.PARTNER_API_KEY = API_KEY
    settings.PARTNER_API_RETRY_BUDGET = 4.5
    settings.PARTNER_API_RETRY_MAX_ATTEMPTS = 2
    settings.PARTNER_API_RETRY_BACKOFF = 0.1
    settings.PARTNER_API_RETRY_BACKOFF_CAP = 0.8
    settings.PARTNER_API_RETRY_AFTER_CAP = 3.0
    settings.PARTNER_API_BREAKER_THRESHOLD = 7
    settings.PARTNER_API_BREAKER_COOLDOWN = 12.0

    client = get_client()

    assert client.retry_policy == RetryPolicy(
        max_attempts=2, budget=4.5, backoff=0.1, backoff_cap=0.8, retry_after_cap=3.0
    )
    assert (client.breaker_threshold, client.breaker_cooldown) == (7, 12.0)
    assert get_client() is client
    settings.PARTNER_API_RETRY_MAX_ATTEMPTS = 3
    assert get_client() is not client
    settings.PARTNER_API_BREAKER_COOLDOWN = 60.0
    assert get_client().breaker_cooldown == 60.0


def test_get_client_reports_unusable_retry_settings(settings: Any) -> None:
    settings.PARTNER_API_BASE_URL = BASE
    settings.PARTNER_API_KEY = API_KEY
    settings.PARTNER_API_RETRY_MAX_ATTEMPTS = 0

    with pytest.raises(ImproperlyConfigured):
        get_client()


@pytest.mark.parametrize("user_id", [" u-1", "u-1 ", "u\x00-1", "u\n1", "x" * 201], ids=repr)
@responses.activate
def test_a_learner_id_that_cannot_travel_in_a_header_is_a_bad_response(user_id):
    client = PartnerApiClient("http://upstream.test", "key-abc", max_attempts=1)
    responses.post(
        "http://upstream.test/plapi/v1/partners/users/create-learner",
        json={"user_id": user_id, "message": "ok"},
    )
    with pytest.raises(PartnerApiBadResponse, match="user_id is not a usable identifier"):
        client.create_learner(username="a", password="Secret-Pass-1", dob=date(2010, 1, 1))


@responses.activate
def test_absurdly_nested_json_is_a_bad_response_not_a_crash():
    client = PartnerApiClient("http://upstream.test", "key-abc", max_attempts=1)
    responses.get(
        "http://upstream.test/plapi/v1/partners/assessments/next-assessment",
        body="[" * 100_000 + "]" * 100_000,
        content_type="application/json",
    )
    with pytest.raises(PartnerApiBadResponse, match="not JSON"):
        client.next_assessment("u-1")


class CountingStore:
    """A circuit store that says another process opened the circuit, and counts its reads."""

    def __init__(self, until: float | None) -> None:
        self.until = until
        self.reads = 0

    def open_until(self, key: str) -> float | None:
        self.reads += 1
        return self.until

    def set_open(self, key: str, until: float) -> None:
        self.until = until

    def set_closed(self, key: str) -> None:
        self.until = None


def test_banners_read_another_processs_open_circuit_at_most_once_a_second(monkeypatch):
    import time as time_module

    from partner_api import resilience
    from partner_api.resilience import set_circuit_store

    store = CountingStore(until=time_module.time() + 30)
    set_circuit_store(store)
    try:
        breaker = resilience.CircuitBreaker(threshold=5, cooldown=30, key="https://up.example")
        clock = [100.0]
        monkeypatch.setattr(resilience.time, "monotonic", lambda: clock[0])

        views = [breaker.snapshot() for _ in range(50)]  # fifty pages in one moment

        assert all(view.state == "open" and not view.available for view in views)
        assert store.reads == 1
        store.set_closed(breaker.key)  # another process's trial call succeeded
        clock[0] += resilience.SNAPSHOT_SHARED_SECONDS
        assert breaker.snapshot().available and store.reads == 2
        # A call always asks the store itself: it never goes through an open circuit.
        store.set_open(breaker.key, time_module.time() + 30)
        assert breaker.allow() is None and store.reads == 3
    finally:
        set_circuit_store(None)
