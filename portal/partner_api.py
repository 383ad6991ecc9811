"""Client for the Learner Assessment Partner API: the only module of the portal that talks HTTP."""

from __future__ import annotations

import json
import logging
import math
import random as _random
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from email.utils import parsedate_to_datetime
from http.cookiejar import DefaultCookiePolicy
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import requests
from django.views.decorators.debug import sensitive_variables
from urllib3.exceptions import MaxRetryError, NewConnectionError, ProtocolError

from portal.partner_api_resilience import (
    DEFAULT_BACKOFF,
    DEFAULT_BACKOFF_CAP,
    DEFAULT_BREAKER_COOLDOWN,
    DEFAULT_BREAKER_THRESHOLD,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_RETRY_AFTER_CAP,
    DEFAULT_RETRY_BUDGET,
    MIN_ATTEMPT_SECONDS,
    CallRecord,
    CircuitBreaker,
    Permit,
    RetryPlan,
    RetryPolicy,
    UpstreamStatus,
    Verdict,
    add_call_listener,
    add_circuit_listener,
    breaker_for,
    check_breaker_settings,
    existing_breaker,
    notify_call_listeners,
    notify_circuit_listeners,
    remove_call_listener,
    remove_circuit_listener,
    reset_circuit_breakers,
)

__all__ = [
    "Answer",
    "AssessmentContent",
    "AssessmentInfo",
    "AssessmentResults",
    "CallRecord",
    "CreatedLearner",
    "FocusArea",
    "NextAssessment",
    "PartnerApiBadResponse",
    "PartnerApiCircuitOpen",
    "PartnerApiClient",
    "PartnerApiError",
    "PartnerApiRejected",
    "PartnerApiServerError",
    "PartnerApiUnavailable",
    "Question",
    "Response",
    "RetryPolicy",
    "SubmitReceipt",
    "UpstreamStatus",
    "add_call_listener",
    "add_circuit_listener",
    "get_client",
    "remove_call_listener",
    "remove_circuit_listener",
    "reset_circuit_breakers",
    "upstream_status",
]

logger = logging.getLogger("portal.partner_api")

# ---------------------------------------------------------------------------------------------
# Assumptions where the spec is silent (DESIGN.md section 4). Everything the client guesses
# about the upstream lives in this block; change a guess here and nowhere else.
#
# - Base URL: the spec's base address is the bare host and every path starts with
#   /plapi/v1/partners; our settings carry the prefix. Both forms are accepted: the prefix is
#   appended when the configured URL does not already end with it.
API_PREFIX = "/plapi/v1/partners"
#
# - learnerid vs user_id: the `learnerid` header carries the `user_id` returned at creation.
LEARNER_ID_HEADER = "learnerid"
API_KEY_HEADER = "apikey"
#
# - dob format: an ISO date, YYYY-MM-DD (see `_dob_value`).
# - level: sent as the query parameter `?level=LOA_PARTNER_LEVEL1/2/3`; omitted means the
#   upstream's default.
LEVEL_PARAM = "level"
#
# - Shape of a `responses` item, and the session type: see `_submission_body`, the one place
#   that builds a submission. `assessment_session` arrives as a numeric-looking string and is
#   sent back as a JSON integer when it is all digits (the request schema says integer).
#
# - Error bodies: a JSON object whose `error`, `message` or `detail` holds a message;
#   otherwise the status alone.
ERROR_MESSAGE_FIELDS = ("error", "message", "detail")
#
# - Request ids: the upstream's request id, if it sends one, is read from the first of these
#   response headers that is present.
REQUEST_ID_HEADERS = ("X-Request-Id", "X-Correlation-Id", "Request-Id")
#
# - Ranges: the spec gives types, not ranges. Ids are positive 64-bit integers, counts,
#   orders and versions fit 32 bits, and decimals (Version, LOAScore) have at most 8 integer
#   digits and are kept to 4 decimal places; anything else is an unusable response.
ID_RANGE = (1, 2**63 - 1)
IDENTIFIER_LIMIT = 200
SMALL_INT_RANGE = (-(2**31), 2**31 - 1)
DECIMAL_LIMIT = Decimal(10) ** 8
DECIMAL_PLACES = Decimal("0.0001")
#
# - Timestamps (Created, UpdatedDateTime): ISO 8601 with an offset; a trailing Z is accepted,
#   a timestamp without an offset is taken as UTC, an unparseable one is dropped (None).
#
# - Idempotency: the spec says nothing, so only what is safe is repeated. GETs are reads and
#   are retried on any "unavailable" failure. create-learner is retried only when the request
#   surely never left this host (a repeat could create a second learner or answer 409).
#   submit-assessment is never repeated here: the services reconcile (results, 409) first.
RETRY_IF_UNAVAILABLE = "if unavailable"
RETRY_IF_NOT_SENT = "if not sent"
RETRY_NEVER = "never"
ENDPOINT_RETRIES = {
    "create-learner": RETRY_IF_NOT_SENT,
    "next-assessment": RETRY_IF_UNAVAILABLE,
    "view-assessment": RETRY_IF_UNAVAILABLE,
    "submit-assessment": RETRY_NEVER,
    "results": RETRY_IF_UNAVAILABLE,
}
NOT_RETRIED = {
    RETRY_IF_NOT_SENT: "not retried: the request may have reached the upstream",
    RETRY_NEVER: "not retried: a submission is never resent by the client",
}
# ---------------------------------------------------------------------------------------------

ENDPOINT_PATHS = {
    "create-learner": "/users/create-learner",
    "next-assessment": "/assessments/next-assessment",
    "view-assessment": "/assessments/view-assessment/{assessment_id}",
    "submit-assessment": "/assessments/submit-assessment",
    "results": "/assessments/results/{assessment_id}",
}

DEFAULT_TIMEOUT = (3.05, 10.0)
UPSTREAM_MESSAGE_LIMIT = 300
SUBMIT_TEXT_BODY_LIMIT = 2000
USER_AGENT = "partner-portal/0.1"
UNAVAILABLE_STATUSES = frozenset({429, 502, 503, 504})
REDACTED = "[redacted]"

_T = TypeVar("_T")
_DIGITS = re.compile(r"[0-9]+")
_INTEGER = re.compile(r"-?[0-9]+")
_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]+")


# Data returned to callers ---------------------------------------------------------------------


@dataclass(frozen=True)
class CreatedLearner:
    """A learner just created upstream."""

    user_id: str
    message: str


@dataclass(frozen=True)
class NextAssessment:
    """The upstream's answer to "what should this learner take next?"."""

    status: str
    assessment_id: int | None  # None: nothing to take now
    target_group: str
    assessment_version: int | None


@dataclass(frozen=True)
class Answer:
    """One possible answer to a question."""

    id: str
    question_id: str
    display_order: int
    copy: str
    icon: str


@dataclass(frozen=True)
class Question:
    """One question of an assessment, with its answers in display order."""

    id: str
    text: str
    group: str
    display_order: int
    created: datetime | None
    updated: datetime | None
    answers: list[Answer]


@dataclass(frozen=True)
class AssessmentInfo:
    """The assessment's title, level, version and id."""

    title: str
    level: str
    preassess: bool
    version: Decimal
    id: int


@dataclass(frozen=True)
class AssessmentContent:
    """An assessment's questions in display order, the session to submit with, and its info."""

    questions: list[Question]
    session: str
    info: AssessmentInfo


@dataclass(frozen=True)
class Response:
    """The learner's answer to one question, as submitted."""

    question_id: str
    answer_id: str


@dataclass(frozen=True)
class SubmitReceipt:
    """The upstream's reply to a successful submission (its body is not specified)."""

    status_code: int
    body: dict | list | str | None


@dataclass(frozen=True)
class FocusArea:
    """One focus area of a result."""

    name: str
    needs_help: str
    questions_count: int


@dataclass(frozen=True)
class AssessmentResults:
    """The results of an assessment; the *_html fields are unsanitized upstream HTML."""

    loa_score: Decimal
    risk_level: str
    trait_title: str
    trait_copy: str
    trait_signs_html: str
    trait_tips_html: str
    result_description_html: str
    focus_areas: list[FocusArea]


# Errors ---------------------------------------------------------------------------------------


class PartnerApiError(Exception):
    """Any failure of a call to the partner API; str() is a sentence safe for logs and staff."""

    default_reason = "request failed"

    def __init__(
        self,
        endpoint: str,
        reason: str | None = None,
        *,
        status: int | None = None,
        request_id: str | None = None,
        upstream_message: str | None = None,
        detail: str | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.reason = reason or self.default_reason
        self.status = status
        self.request_id = request_id
        self.upstream_message = upstream_message
        self.detail = detail if detail is not None else upstream_message
        super().__init__(self._sentence())

    def _sentence(self) -> str:
        """Build the readable message from the parts."""
        sentence = f"{self.endpoint}: {self.reason}"
        if self.status is not None:
            sentence += f" ({self.status})"
        if self.detail:
            sentence += f": {self.detail}"
        return sentence

    def __str__(self) -> str:
        return self._sentence()


class PartnerApiUnavailable(PartnerApiError):
    """The upstream could not be reached, timed out, is overloaded or asked us to slow down."""

    default_reason = "upstream unavailable"

    def __init__(
        self,
        endpoint: str,
        reason: str | None = None,
        *,
        retry_after: float | None = None,
        reached_upstream: bool = True,
        **kwargs: Any,
    ) -> None:
        self.retry_after = retry_after
        # False only when the request surely never left this host (connect failed or timed
        # out): then even a POST can be retried without risk of doing it twice.
        self.reached_upstream = reached_upstream
        super().__init__(endpoint, reason, **kwargs)


class PartnerApiRejected(PartnerApiError):
    """The upstream refused the request (a 4xx other than 429)."""

    default_reason = "upstream refused the request"


class PartnerApiBadResponse(PartnerApiError):
    """The upstream answered with something we cannot use (not JSON, wrong shape, redirect)."""

    default_reason = "unexpected response from upstream"


class PartnerApiServerError(PartnerApiError):
    """The upstream failed with a 5xx other than 502/503/504."""

    default_reason = "upstream server error"


class PartnerApiCircuitOpen(PartnerApiUnavailable):
    """The upstream failed repeatedly, so calls fail fast for a cool-down without being sent."""

    default_reason = "assessment service marked unavailable (circuit open)"

    def __init__(
        self,
        endpoint: str,
        reason: str | None = None,
        *,
        open_until: datetime | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.open_until = open_until  # None while a trial call is deciding
        super().__init__(endpoint, reason, retry_after=retry_after, reached_upstream=False)


class _ShapeError(Exception):
    """A response body that does not fit the expected shape; the message names the field path."""


@dataclass(frozen=True)
class _Request:
    """Everything needed to send (and resend) one call, and the values it must never echo."""

    endpoint: str
    method: str
    url: str
    headers: dict[str, str]
    params: Mapping[str, str] | None
    json_body: Any
    secrets: tuple[str, ...]


# Upstream status ------------------------------------------------------------------------------


def upstream_status(base_url: str | None = None) -> UpstreamStatus:
    """Say whether calls to the configured upstream (or `base_url`) fail fast; never does I/O."""
    if base_url is None:
        from django.conf import settings

        base_url = settings.PARTNER_API_BASE_URL
    try:
        breaker = existing_breaker(_breaker_key(base_url))
    except ValueError:  # a broken setting: get_client() reports it, a banner should not
        breaker = None
    if breaker is None:  # no call yet: nothing known against the upstream
        return UpstreamStatus(available=True, open_until=None, consecutive_failures=0)
    snapshot = breaker.snapshot()
    open_until = None
    if snapshot.open_for is not None:
        open_until = datetime.now(UTC) + timedelta(seconds=snapshot.open_for)
    return UpstreamStatus(snapshot.available, open_until, snapshot.consecutive_failures)


# The client -----------------------------------------------------------------------------------


class PartnerApiClient:
    """One partner's connection to the upstream, with a keep-alive pool shared by all calls.

    GETs are retried on "unavailable" failures with full-jitter backoff (or the upstream's
    Retry-After, up to `retry_after_cap`), at most `max_attempts` times within `retry_budget`
    seconds per call; create-learner only when the request surely never left; submissions
    never. A circuit breaker shared by every client of the same upstream fails calls fast for
    `breaker_cooldown` seconds after `breaker_threshold` consecutive calls found it down (0 turns
    it off). `sleep`, `random` (uniform(a, b)) and `clock` (monotonic seconds) are for tests.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        timeout: tuple[float, float] | float = DEFAULT_TIMEOUT,
        *,
        retry_budget: float = DEFAULT_RETRY_BUDGET,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        backoff: float = DEFAULT_BACKOFF,
        backoff_cap: float = DEFAULT_BACKOFF_CAP,
        retry_after_cap: float = DEFAULT_RETRY_AFTER_CAP,
        breaker_threshold: int = DEFAULT_BREAKER_THRESHOLD,
        breaker_cooldown: float = DEFAULT_BREAKER_COOLDOWN,
        sleep: Callable[[float], object] = time.sleep,
        random: Callable[[float, float], float] = _random.uniform,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.base_url = _normalise_base_url(base_url)
        if not isinstance(api_key, str) or not api_key.strip():
            raise ValueError("The partner API key is empty.")
        if _CONTROL_CHARS.search(api_key) or api_key != api_key.strip():
            raise ValueError("The partner API key contains whitespace or control characters.")
        self._api_key = api_key
        self.timeout = _normalise_timeout(timeout)
        self.retry_policy = RetryPolicy(
            max_attempts=max_attempts,
            budget=retry_budget,
            backoff=backoff,
            backoff_cap=backoff_cap,
            retry_after_cap=retry_after_cap,
        )
        check_breaker_settings(breaker_threshold, breaker_cooldown)
        self.breaker_threshold = breaker_threshold
        self.breaker_cooldown = float(breaker_cooldown)
        self._breaker_key = _breaker_key(self.base_url)
        self._sleep = sleep
        self._uniform = random
        self._clock = clock
        self._session = requests.Session()
        self._session.headers.update(
            {API_KEY_HEADER: api_key, "Accept": "application/json", "User-Agent": USER_AGENT}
        )
        # One session serves every learner: never let an upstream cookie set for one learner
        # travel with another learner's requests.
        self._session.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))

    def __repr__(self) -> str:
        return f"<PartnerApiClient {self.base_url}>"

    def close(self) -> None:
        """Close the pooled connections."""
        self._session.close()

    @property
    def circuit_breaker(self) -> CircuitBreaker:
        """Return the breaker this process keeps for the client's upstream."""
        return breaker_for(
            self._breaker_key,
            threshold=self.breaker_threshold,
            cooldown=self.breaker_cooldown,
            clock=self._clock,
        )

    def upstream_status(self) -> UpstreamStatus:
        """Say whether calls to this client's upstream fail fast; never does I/O."""
        return upstream_status(self.base_url)

    # Endpoints --------------------------------------------------------------------------------

    @sensitive_variables()  # the password and the key must not reach an error page
    def create_learner(
        self,
        *,
        username: str,
        password: str,
        dob: date,
        email: str | None = None,
        first_name: str | None = None,
        last_name: str | None = None,
        level: str | None = None,
    ) -> CreatedLearner:
        """Create a learner upstream and return its user_id."""
        body: dict[str, str] = {"username": username, "password": password, "dob": _dob_value(dob)}
        optional = {"email": email, "first_name": first_name, "last_name": last_name}
        body.update({field: value for field, value in optional.items() if value})
        params = {LEVEL_PARAM: level} if level else None
        return self._request_json(
            "create-learner",
            _parse_created_learner,
            "POST",
            json_body=body,
            params=params,
            secrets=(password,),
        )

    def next_assessment(self, learner_id: str) -> NextAssessment:
        """Ask which assessment the learner should take next (assessment_id None: none now)."""
        return self._request_json(
            "next-assessment", _parse_next_assessment, "GET", learner_id=learner_id
        )

    def view_assessment(self, learner_id: str, assessment_id: int) -> AssessmentContent:
        """Fetch an assessment's questions, answers and session."""
        return self._request_json(
            "view-assessment",
            _parse_assessment_content,
            "GET",
            learner_id=learner_id,
            assessment_id=assessment_id,
        )

    def submit_assessment(
        self, learner_id: str, session: str, responses: list[Response]
    ) -> SubmitReceipt:
        """Submit the learner's responses (one per question) with the content's session."""
        body = _submission_body(session, responses)
        return self._call(
            "submit-assessment", "POST", _read_submit_reply, learner_id=learner_id, json_body=body
        )

    def results(self, learner_id: str, assessment_id: int) -> AssessmentResults:
        """Fetch the results of a submitted assessment."""
        return self._request_json(
            "results", _parse_results, "GET", learner_id=learner_id, assessment_id=assessment_id
        )

    # Plumbing ---------------------------------------------------------------------------------

    @sensitive_variables()
    def _request_json(
        self, endpoint: str, parser: Callable[[Any], _T], method: str, **request: Any
    ) -> _T:
        """Make a call and validate its JSON body into a dataclass with the parser."""

        def read(response: requests.Response, request_id: str | None) -> _T:
            common: dict[str, Any] = {"status": response.status_code, "request_id": request_id}
            try:
                data = response.json()
            except (ValueError, RecursionError):  # RecursionError: absurdly nested JSON
                raise PartnerApiBadResponse(endpoint, detail="body is not JSON", **common) from None
            try:
                return parser(data)
            except _ShapeError as exc:
                raise PartnerApiBadResponse(endpoint, detail=str(exc), **common) from None

        return self._call(endpoint, method, read, **request)

    @sensitive_variables()
    def _call(
        self,
        endpoint: str,
        method: str,
        read: Callable[[requests.Response, str | None], _T],
        *,
        learner_id: str | None = None,
        assessment_id: int | None = None,
        params: Mapping[str, str] | None = None,
        json_body: Any = None,
        secrets: tuple[str, ...] = (),
    ) -> _T:
        """Make one call: fail fast while the circuit is open, else attempt it as allowed."""
        path = ENDPOINT_PATHS[endpoint]
        if assessment_id is not None:
            path = path.format(assessment_id=_path_id(assessment_id))
        headers = {}
        if learner_id is not None:
            headers[LEARNER_ID_HEADER] = _header_learner_id(learner_id)
        request = _Request(
            endpoint=endpoint,
            method=method,
            url=self.base_url + path,
            headers=headers,
            params=params,
            json_body=json_body,
            secrets=self._secrets(learner_id, secrets),
        )

        breaker = self.circuit_breaker
        permit = breaker.allow()
        if permit is None:
            raise self._refuse(request, breaker)
        try:
            result = self._attempt_until_done(request, read)
        except BaseException as exc:
            self._settle(breaker, permit, _verdict(exc), request)
            raise
        self._settle(breaker, permit, Verdict.HEALTHY, request)
        return result

    @sensitive_variables()
    def _attempt_until_done(
        self, request: _Request, read: Callable[[requests.Response, str | None], _T]
    ) -> _T:
        """Attempt a request, retrying as its endpoint allows, and return what `read` makes."""
        policy = self.retry_policy
        rule = ENDPOINT_RETRIES[request.endpoint]
        max_attempts = 1 if rule == RETRY_NEVER else policy.max_attempts
        deadline = self._clock() + policy.budget
        attempt = 0
        while True:
            attempt += 1
            timeout = self._attempt_timeout(request, attempt, deadline)
            at = datetime.now(UTC)
            started = self._clock()
            error: PartnerApiError | None = None
            try:
                response, request_id = self._send(request, timeout)
                result = read(response, request_id)
                status: int | None = response.status_code
            except PartnerApiError as exc:
                error = exc
                status, request_id = exc.status, exc.request_id
            latency_ms = max(round((self._clock() - started) * 1000), 0)

            plan: RetryPlan | None = None
            if isinstance(error, PartnerApiUnavailable):
                if rule == RETRY_IF_UNAVAILABLE or (
                    rule == RETRY_IF_NOT_SENT and not error.reached_upstream
                ):
                    plan = policy.plan(
                        attempt=attempt,
                        max_attempts=max_attempts,
                        retry_after=error.retry_after,
                        time_left=deadline - self._clock(),
                        uniform=self._uniform,
                    )
                else:
                    plan = RetryPlan(None, NOT_RETRIED[rule])

            record = CallRecord(
                endpoint=request.endpoint,
                method=request.method,
                outcome=str(status) if status is not None else _failure_kind(error),
                status=status,
                ok=error is None,
                latency_ms=latency_ms,
                attempt=attempt,
                request_id=request_id,
                error=error,
                at=at,
            )
            _log_attempt(record, max_attempts, plan)
            notify_call_listeners(record)
            if error is None:
                return result
            if plan is None or plan.delay is None:
                raise error
            self._sleep(plan.delay)

    def _attempt_timeout(
        self, request: _Request, attempt: int, deadline: float
    ) -> tuple[float, float]:
        """Return the (connect, read) timeout of an attempt, cut to what is left of the budget."""
        if attempt == 1:
            if request.method != "GET":
                return self.timeout  # a POST sent once gets all its time, never cut short
            time_left = self.retry_policy.budget
        else:
            time_left = max(deadline - self._clock(), MIN_ATTEMPT_SECONDS)
        connect, read = self.timeout
        return (min(connect, time_left), min(read, time_left))

    @sensitive_variables()
    def _send(
        self, request: _Request, timeout: tuple[float, float]
    ) -> tuple[requests.Response, str | None]:
        """Send one request and return the response and request id on a 2xx, else raise."""
        try:
            response = self._session.request(
                request.method,
                request.url,
                params=request.params,
                json=request.json_body,
                headers=request.headers,
                timeout=timeout,
                allow_redirects=False,
            )
        except requests.RequestException as exc:
            raise _transport_error(request.endpoint, exc) from None

        request_id = _request_id(response, request.secrets)
        error = _status_error(request.endpoint, response, request_id, request.secrets)
        if error is not None:
            raise error
        return response, request_id

    def _refuse(self, request: _Request, breaker: CircuitBreaker) -> PartnerApiCircuitOpen:
        """Build, log and report the error of a call refused by the open circuit."""
        snapshot = breaker.snapshot()
        open_until = None
        if snapshot.open_for is not None:
            open_until = datetime.now(UTC) + timedelta(seconds=snapshot.open_for)
        error = PartnerApiCircuitOpen(
            request.endpoint, open_until=open_until, retry_after=snapshot.open_for
        )
        logger.info(
            "partner API %s %s -> circuit open, not sent (%s)",
            request.endpoint,
            request.method,
            f"{snapshot.open_for:.0f} s of cool-down left"
            if snapshot.open_for is not None
            else "a trial call is under way",
        )
        notify_call_listeners(
            CallRecord(
                endpoint=request.endpoint,
                method=request.method,
                outcome="circuit open",
                status=None,
                ok=False,
                latency_ms=0,
                attempt=0,
                request_id=None,
                error=error,
                at=datetime.now(UTC),
            )
        )
        return error

    def _settle(
        self, breaker: CircuitBreaker, permit: Permit, verdict: Verdict, request: _Request
    ) -> None:
        """Tell the breaker how a call ended, and log when that opens or closes the circuit."""
        change = breaker.settle(permit, verdict)
        if change is not None:
            notify_circuit_listeners(self.base_url, change)
        if change == "closed":
            logger.info("partner API circuit closed: a trial %s call succeeded", request.endpoint)
        elif change is not None:
            logger.warning(
                "partner API circuit %s after %d consecutive failed calls (last: %s); "
                "failing fast for %g s",
                change,
                breaker.snapshot().consecutive_failures,
                request.endpoint,
                breaker.cooldown,
            )

    def _secrets(self, learner_id: str | None, extra: tuple[str, ...]) -> tuple[str, ...]:
        """List the values that must never be echoed back from the upstream."""
        return tuple(value for value in (self._api_key, learner_id, *extra) if value)


# Settings -------------------------------------------------------------------------------------

# Each client option and the setting (and environment variable) it comes from.
CLIENT_SETTINGS = {
    "retry_budget": ("PARTNER_API_RETRY_BUDGET", DEFAULT_RETRY_BUDGET),
    "max_attempts": ("PARTNER_API_RETRY_MAX_ATTEMPTS", DEFAULT_MAX_ATTEMPTS),
    "backoff": ("PARTNER_API_RETRY_BACKOFF", DEFAULT_BACKOFF),
    "backoff_cap": ("PARTNER_API_RETRY_BACKOFF_CAP", DEFAULT_BACKOFF_CAP),
    "retry_after_cap": ("PARTNER_API_RETRY_AFTER_CAP", DEFAULT_RETRY_AFTER_CAP),
    "breaker_threshold": ("PARTNER_API_BREAKER_THRESHOLD", DEFAULT_BREAKER_THRESHOLD),
    "breaker_cooldown": ("PARTNER_API_BREAKER_COOLDOWN", DEFAULT_BREAKER_COOLDOWN),
}

_cached_client: tuple[tuple[Any, ...], PartnerApiClient] | None = None
_cache_lock = threading.Lock()


def get_client() -> PartnerApiClient:
    """Return the process's client for the configured upstream, rebuilt if settings changed."""
    global _cached_client
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    base_url = settings.PARTNER_API_BASE_URL
    api_key = settings.PARTNER_API_KEY
    timeout = getattr(settings, "PARTNER_API_TIMEOUT", DEFAULT_TIMEOUT)
    options = {
        option: getattr(settings, name, default)
        for option, (name, default) in CLIENT_SETTINGS.items()
    }
    with _cache_lock:
        try:
            key = (base_url, api_key, _normalise_timeout(timeout), *options.items())
            if _cached_client is not None and _cached_client[0] == key:
                return _cached_client[1]
            client = PartnerApiClient(base_url, api_key, timeout, **options)
        except ValueError as exc:
            raise ImproperlyConfigured(f"PARTNER_API_* settings: {exc}") from None
        # The old client is left to the garbage collector: another thread may still use it.
        # Its circuit breaker lives on: it belongs to the upstream, not to the client.
        _cached_client = (key, client)
        return client


def _normalise_base_url(base_url: str) -> str:
    """Strip a trailing slash and append the API prefix unless it is already there."""
    if not isinstance(base_url, str):
        raise ValueError("The partner API base URL must be a string.")
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("The partner API base URL must be an http(s) URL with a host.")
    if parts.query or parts.fragment:
        raise ValueError("The partner API base URL must not carry a query or fragment.")
    url = base_url.strip().rstrip("/")
    if not url.endswith(API_PREFIX):
        url += API_PREFIX
    return url


def _breaker_key(base_url: str) -> str:
    """Name an upstream for the breaker registry: its normalised URL, scheme and host lowercase."""
    parts = urlsplit(_normalise_base_url(base_url))
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, "", ""))


def _normalise_timeout(timeout: tuple[float, ...] | list[float] | float) -> tuple[float, float]:
    """Return a (connect, read) pair of positive seconds."""
    if isinstance(timeout, int | float) and not isinstance(timeout, bool):
        pair: tuple[Any, ...] = (timeout, timeout)
    elif isinstance(timeout, tuple | list) and len(timeout) == 1:
        pair = (timeout[0], timeout[0])
    elif isinstance(timeout, tuple | list) and len(timeout) == 2:
        pair = tuple(timeout)
    else:
        raise ValueError("The partner API timeout must be seconds or a (connect, read) pair.")
    try:
        connect, read = (float(value) for value in pair)
    except (TypeError, ValueError):
        raise ValueError("The partner API timeout must be numbers of seconds.") from None
    if not (0 < connect < math.inf and 0 < read < math.inf):
        raise ValueError("The partner API timeout must be positive.")
    return (connect, read)


# Requests -------------------------------------------------------------------------------------


def _dob_value(dob: date) -> str:
    """Render a date of birth as the upstream expects it (assumed ISO YYYY-MM-DD)."""
    if isinstance(dob, datetime) or not isinstance(dob, date):
        raise TypeError("dob must be a datetime.date")
    return dob.isoformat()


def _submission_body(session: str, responses: list[Response]) -> dict[str, Any]:
    """Build the submit-assessment body: one {question_id, answer_id} item per question."""
    # Spec gap: the item shape is not shown; we send the ids of Question and Answer under the
    # names `question_id` / `answer_id`. The session schema says integer while the content
    # carries it as a numeric-looking string: send an integer when it is all digits.
    if not isinstance(session, str | int) or isinstance(session, bool) or str(session) == "":
        raise ValueError("session must be the non-empty assessment_session of the content")
    if not responses:
        raise ValueError("responses must hold one Response per question")
    seen: set[str] = set()
    items = []
    for response in responses:
        if not isinstance(response, Response):
            raise TypeError("responses must be Response objects")
        if response.question_id in seen:
            raise ValueError("responses must hold one Response per question (duplicate)")
        seen.add(response.question_id)
        items.append({"question_id": response.question_id, "answer_id": response.answer_id})
    session_text = str(session)
    session_value: int | str = (
        int(session_text) if _DIGITS.fullmatch(session_text) else session_text
    )
    return {"responses": items, "session": session_value}


def _path_id(assessment_id: int) -> int:
    """Check an assessment id before it goes into a URL path."""
    if isinstance(assessment_id, bool) or not isinstance(assessment_id, int):
        raise TypeError("assessment_id must be an int")
    return assessment_id


def _header_learner_id(learner_id: str) -> str:
    """Check a learner id before it goes into a header (without ever echoing it)."""
    if not isinstance(learner_id, str) or not learner_id.strip():
        raise ValueError("learner_id must be a non-empty string")
    if _CONTROL_CHARS.search(learner_id) or learner_id != learner_id.strip():
        raise ValueError("learner_id contains whitespace or control characters")
    return learner_id


def _log_attempt(record: CallRecord, max_attempts: int, plan: RetryPlan | None) -> None:
    """Log one line per attempt: never headers, bodies, query values or identifiers of people."""
    details = ""
    if isinstance(record.error, PartnerApiBadResponse) and record.error.detail:
        details += f"; {record.error.detail}"  # a field path or "body is not JSON": no values
    if plan is not None:
        details += f"; {plan.reason}"
    logger.log(
        logging.INFO if record.ok else logging.WARNING,
        "partner API %s %s -> %s in %d ms (attempt %d/%d, request id %s)%s",
        record.endpoint,
        record.method,
        record.outcome,
        record.latency_ms,
        record.attempt,
        max_attempts,
        record.request_id or "-",
        details,
    )


def _failure_kind(error: PartnerApiError | None) -> str:
    """Name a failure that came without a status (a transport failure) for logs and records."""
    return error.reason if error is not None else "no status"


def _verdict(exc: BaseException) -> Verdict:
    """Say what the way a call ended tells about the upstream's health, for the breaker."""
    if isinstance(exc, PartnerApiUnavailable | PartnerApiServerError):
        return Verdict.DOWN
    if isinstance(exc, PartnerApiRejected | PartnerApiBadResponse):
        return Verdict.HEALTHY  # it answered, if not as hoped
    return Verdict.UNKNOWN


# Responses ------------------------------------------------------------------------------------


def _transport_error(endpoint: str, exc: requests.RequestException) -> PartnerApiError:
    """Map a requests exception by type, never by its text (which holds the URL)."""
    if isinstance(exc, requests.ConnectTimeout):
        return PartnerApiUnavailable(endpoint, "timed out connecting", reached_upstream=False)
    if isinstance(exc, requests.ReadTimeout):
        return PartnerApiUnavailable(endpoint, "timed out waiting for a response")
    if isinstance(exc, requests.exceptions.SSLError):
        return PartnerApiUnavailable(endpoint, "TLS handshake failed", reached_upstream=False)
    if isinstance(exc, requests.exceptions.ProxyError):
        return PartnerApiUnavailable(
            endpoint, "could not connect through the proxy", reached_upstream=False
        )
    if isinstance(exc, requests.exceptions.ChunkedEncodingError):
        return PartnerApiUnavailable(endpoint, "connection dropped while reading the response")
    if isinstance(exc, requests.ConnectionError):
        cause = exc.args[0] if exc.args else None
        if isinstance(cause, MaxRetryError):
            cause = cause.reason
        if isinstance(cause, NewConnectionError):  # refused, DNS failure, unreachable host
            return PartnerApiUnavailable(endpoint, "could not connect", reached_upstream=False)
        if isinstance(cause, ProtocolError | ConnectionResetError):
            return PartnerApiUnavailable(endpoint, "connection dropped")
        # Cause unknown: assume the request may have arrived.
        return PartnerApiUnavailable(endpoint, "connection failed")
    if isinstance(exc, requests.Timeout):
        return PartnerApiUnavailable(endpoint, "timed out")
    if isinstance(exc, requests.exceptions.ContentDecodingError):
        return PartnerApiBadResponse(endpoint, detail="body could not be decoded")
    return PartnerApiError(endpoint, f"request failed ({type(exc).__name__})")


def _status_error(
    endpoint: str, response: requests.Response, request_id: str | None, secrets: tuple[str, ...]
) -> PartnerApiError | None:
    """Return the error a non-success status stands for, or None for a 2xx."""
    status = response.status_code
    if 200 <= status < 300:
        return None
    common: dict[str, Any] = {"status": status, "request_id": request_id}
    if 300 <= status < 400:
        return PartnerApiBadResponse(endpoint, "unexpected redirect", **common)
    message = _upstream_message(response, secrets)
    if status in UNAVAILABLE_STATUSES:
        return PartnerApiUnavailable(
            endpoint,
            "upstream is rate limiting us" if status == 429 else None,
            retry_after=_retry_after(response),
            upstream_message=message,
            **common,
        )
    if 400 <= status < 500:
        return PartnerApiRejected(endpoint, upstream_message=message, **common)
    if 500 <= status < 600:
        return PartnerApiServerError(endpoint, upstream_message=message, **common)
    return PartnerApiBadResponse(endpoint, "unexpected status", **common)


def _request_id(response: requests.Response, secrets: tuple[str, ...]) -> str | None:
    """Read the upstream's request id header, if any."""
    for header in REQUEST_ID_HEADERS:
        value = response.headers.get(header)
        if value:
            return _clean_text(value, 100, secrets) or None
    return None


def _retry_after(response: requests.Response) -> float | None:
    """Parse Retry-After (seconds or an HTTP date) into seconds from now."""
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if not math.isfinite(seconds):
        return None
    return max(seconds, 0.0)


def _upstream_message(response: requests.Response, secrets: tuple[str, ...]) -> str | None:
    """Take a short message from a JSON error body's error/message/detail, if it has one."""
    try:
        data = json.loads(response.content)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    for field in ERROR_MESSAGE_FIELDS:
        rendered = _render_message(data.get(field), depth=0)
        if rendered:
            return _clean_text(rendered, UPSTREAM_MESSAGE_LIMIT, secrets) or None
    return None


# Keys of structured error details that may echo the submitted input (passwords included).
_ECHO_KEYS = frozenset({"input", "ctx", "url", "value", "password"})


def _render_message(value: Any, depth: int) -> str:
    """Render a message, or a list/dict of validation details, as one short line."""
    if isinstance(value, str):
        return value
    if depth > 3:
        return ""
    if isinstance(value, list):
        return "; ".join(filter(None, (_render_message(item, depth + 1) for item in value[:10])))
    if isinstance(value, dict):
        text = value.get("msg") or value.get("message")
        if isinstance(text, str):  # {"loc": [...], "msg": "..."} and friends
            loc = value.get("loc")
            if isinstance(loc, list) and loc:
                return ".".join(str(part) for part in loc) + ": " + text
            return text
        parts = []
        for key, item in list(value.items())[:10]:
            if str(key) in _ECHO_KEYS:
                continue
            rendered = _render_message(item, depth + 1)
            if rendered:
                parts.append(f"{key}: {rendered}")
        return "; ".join(parts)
    return ""


def _clean_text(text: str, limit: int, secrets: tuple[str, ...]) -> str:
    """Redact secrets, fold control characters and whitespace, and truncate."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    text = " ".join(_CONTROL_CHARS.sub(" ", text).split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def _read_submit_reply(response: requests.Response, request_id: str | None) -> SubmitReceipt:
    """Turn a successful submission's reply into a receipt."""
    return SubmitReceipt(status_code=response.status_code, body=_submit_reply_body(response))


def _submit_reply_body(response: requests.Response) -> dict | list | str | None:
    """Keep the unspecified reply to a submission: JSON if it is JSON, else short text."""
    if not response.content:
        return None
    try:
        return response.json()
    except (ValueError, RecursionError):
        return response.text[:SUBMIT_TEXT_BODY_LIMIT]


# Validation of response bodies ----------------------------------------------------------------

_MISSING = object()


def _object(value: Any, path: str) -> dict[str, Any]:
    """Require a JSON object."""
    if not isinstance(value, dict):
        raise _ShapeError(f"{path} is not an object")
    return value


def _array(value: Any, path: str) -> list[Any]:
    """Require a JSON array."""
    if not isinstance(value, list):
        raise _ShapeError(f"{path} is not an array")
    return value


def _field(data: dict[str, Any], key: str, path: str, default: Any = _MISSING) -> Any:
    """Return a field, its default when missing or null, or raise naming the path."""
    value = data.get(key)
    if value is None:
        if default is _MISSING:
            raise _ShapeError(f"{_join(path, key)} missing")
        return default
    return value


def _text(data: dict[str, Any], key: str, path: str, default: Any = _MISSING) -> str:
    """Return a string field."""
    value = _field(data, key, path, default)
    if not isinstance(value, str):
        raise _ShapeError(f"{_join(path, key)} is not a string")
    # NUL can be neither shown nor stored (PostgreSQL refuses it in text).
    return value.replace("\x00", "")


def _html(data: dict[str, Any], key: str, path: str) -> str:
    """Return an HTML fragment field that must be present; null means empty."""
    if key not in data:
        raise _ShapeError(f"{_join(path, key)} missing")
    return _text(data, key, path, default="")


def _identifier(data: dict[str, Any], key: str, path: str, default: Any = _MISSING) -> str:
    """Return an id that may arrive as a string or an integer, as a non-empty string."""
    value = _field(data, key, path, default)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise _ShapeError(f"{_join(path, key)} is not a string or integer")
    if not value.strip():
        raise _ShapeError(f"{_join(path, key)} is empty")
    # Ids travel back in headers and are stored in indexed columns: no control characters,
    # no surrounding spaces, and a sane length.
    if value != value.strip() or _CONTROL_CHARS.search(value) or len(value) > IDENTIFIER_LIMIT:
        raise _ShapeError(f"{_join(path, key)} is not a usable identifier")
    return value


def _integer(
    data: dict[str, Any],
    key: str,
    path: str,
    default: Any = _MISSING,
    bounds: tuple[int, int] = SMALL_INT_RANGE,
) -> Any:
    """Return an integer field that may arrive as an int, an integral float or digits."""
    value = _field(data, key, path, default)
    if value is default and default is not _MISSING:
        return value
    if isinstance(value, bool):
        raise _ShapeError(f"{_join(path, key)} is not an integer")
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        number = int(value.strip())
    else:
        raise _ShapeError(f"{_join(path, key)} is not an integer")
    low, high = bounds
    if not low <= number <= high:
        raise _ShapeError(f"{_join(path, key)} is out of range")
    return number


def _decimal(data: dict[str, Any], key: str, path: str) -> Decimal:
    """Return a finite decimal field from a number or a numeric string."""
    value = _field(data, key, path)
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _ShapeError(f"{_join(path, key)} is not a number")
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise _ShapeError(f"{_join(path, key)} is not a number") from None
    if not number.is_finite():
        raise _ShapeError(f"{_join(path, key)} is not a finite number")
    if abs(number) >= DECIMAL_LIMIT:
        raise _ShapeError(f"{_join(path, key)} is out of range")
    if number.as_tuple().exponent < -4:
        number = number.quantize(DECIMAL_PLACES)  # the portal keeps four decimal places
    return number


def _boolean(data: dict[str, Any], key: str, path: str, default: bool) -> bool:
    """Return a boolean field, accepting true/false strings and 0/1."""
    value = _field(data, key, path, default)
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise _ShapeError(f"{_join(path, key)} is not a boolean")


def _timestamp(data: dict[str, Any], key: str) -> datetime | None:
    """Return an aware datetime, or None when missing or unparseable (display only)."""
    value = data.get(key)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _join(path: str, key: str) -> str:
    """Join a field path and a key."""
    return f"{path}.{key}" if path else key


def _parse_created_learner(data: Any) -> CreatedLearner:
    """Validate a create-learner body."""
    body = _object(data, "body")
    return CreatedLearner(
        user_id=_identifier(body, "user_id", ""),
        message=_text(body, "message", "", default=""),
    )


def _parse_next_assessment(data: Any) -> NextAssessment:
    """Validate a next-assessment body; never depends on status values."""
    body = _object(data, "body")
    return NextAssessment(
        status=_loose_text(body, "status"),
        assessment_id=_integer(body, "assessment_id", "", default=None, bounds=ID_RANGE),
        target_group=_loose_text(body, "target_group"),
        assessment_version=_integer(body, "assessment_version", "", default=None),
    )


def _loose_text(data: dict[str, Any], key: str) -> str:
    """Return a display-only string field; missing or null is "", a number becomes text."""
    value = data.get(key)
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise _ShapeError(f"{key} is not a string")
    return value.replace("\x00", "")


def _parse_assessment_content(data: Any) -> AssessmentContent:
    """Validate a view-assessment body, sorting questions and answers by DisplayOrder."""
    body = _object(data, "body")
    raw_questions = _array(_field(body, "questions", ""), "questions")
    if not raw_questions:
        raise _ShapeError("questions is empty")
    questions = [
        _parse_question(item, f"questions[{index}]") for index, item in enumerate(raw_questions)
    ]
    seen: set[str] = set()
    for index, question in enumerate(questions):
        if question.id in seen:
            raise _ShapeError(f"questions[{index}].id is a duplicate")
        seen.add(question.id)
    questions.sort(key=lambda question: question.display_order)

    session = _field(body, "assessment_session", "")
    if isinstance(session, bool) or not isinstance(session, str | int):
        raise _ShapeError("assessment_session is not a string or integer")
    if not str(session).strip():
        raise _ShapeError("assessment_session is empty")

    info = _object(_field(body, "assessment_info", ""), "assessment_info")
    return AssessmentContent(
        questions=questions,
        session=str(session),
        info=AssessmentInfo(
            title=_text(info, "Title", "assessment_info"),
            level=_text(info, "Level", "assessment_info", default=""),
            preassess=_boolean(info, "Preassess", "assessment_info", default=False),
            version=_decimal(info, "Version", "assessment_info"),
            id=_integer(info, "id", "assessment_info", bounds=ID_RANGE),
        ),
    )


def _parse_question(data: Any, path: str) -> Question:
    """Validate one question and its answers."""
    item = _object(data, path)
    question_id = _identifier(item, "id", path)
    raw_answers = _array(_field(item, "answers", path), f"{path}.answers")
    if not raw_answers:
        raise _ShapeError(f"{path}.answers is empty")
    answers = [
        _parse_answer(answer, f"{path}.answers[{index}]", question_id)
        for index, answer in enumerate(raw_answers)
    ]
    seen: set[str] = set()
    for index, answer in enumerate(answers):
        if answer.id in seen:
            raise _ShapeError(f"{path}.answers[{index}].id is a duplicate")
        seen.add(answer.id)
    answers.sort(key=lambda answer: answer.display_order)
    return Question(
        id=question_id,
        text=_text(item, "Question", path),
        group=_text(item, "Group", path),
        display_order=_integer(item, "DisplayOrder", path),
        created=_timestamp(item, "Created"),
        updated=_timestamp(item, "UpdatedDateTime"),
        answers=answers,
    )


def _parse_answer(data: Any, path: str, question_id: str) -> Answer:
    """Validate one answer; a missing QuestionId means the parent question."""
    item = _object(data, path)
    return Answer(
        id=_identifier(item, "id", path),
        question_id=_identifier(item, "QuestionId", path, default=question_id),
        display_order=_integer(item, "DisplayOrder", path),
        copy=_text(item, "AnswerCopy", path),
        icon=_text(item, "Icon", path, default=""),
    )


def _parse_results(data: Any) -> AssessmentResults:
    """Validate a results body."""
    body = _object(data, "body")
    raw_areas = _array(_field(body, "focus_areas", ""), "focus_areas")
    return AssessmentResults(
        loa_score=_decimal(body, "LOAScore", ""),
        risk_level=_text(body, "RiskLevel", ""),
        trait_title=_text(body, "TraitTitle", ""),
        trait_copy=_text(body, "TraitCopy", ""),
        trait_signs_html=_html(body, "TraitSigns", ""),
        trait_tips_html=_html(body, "TraitTips", ""),
        result_description_html=_html(body, "ResultDescription", ""),
        focus_areas=[
            _parse_focus_area(item, f"focus_areas[{index}]") for index, item in enumerate(raw_areas)
        ],
    )


def _parse_focus_area(data: Any, path: str) -> FocusArea:
    """Validate one focus area."""
    item = _object(data, path)
    return FocusArea(
        name=_text(item, "search_filter_name", path),
        needs_help=_text(item, "needs_help", path),
        questions_count=_integer(item, "questions_count", path),
    )
