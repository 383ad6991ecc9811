"""The partner API client: PartnerApiClient and its five endpoints, and the process's client.

Owns the client's configuration (checking the base URL, key, timeout, retry and breaker
settings) and the endpoints of the contract: each checks its arguments, builds its request
(path, learnerid header, query, body) and names the parser of its reply. Every call then goes
through calls.Caller (breaker, retries, logs) and transport.Transport (HTTP). Also owns where
the process's client comes from: get_client() builds it from the PARTNER_API_* settings (each
read from the environment by portal.settings) and keeps it until they change, and
upstream_status() tells pages and banners, without any I/O, whether calls fail fast.
"""

from __future__ import annotations

import math
import random as _random
import threading
import time
from collections.abc import Callable, Mapping
from datetime import date
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.views.decorators.debug import sensitive_variables

from partner_api.assumptions import (
    API_PREFIX,
    ENDPOINT_PATHS,
    LEARNER_ID_HEADER,
    LEVEL_PARAM,
    _dob_value,
    _submission_body,
)
from partner_api.calls import Caller
from partner_api.contract import (
    AssessmentContent,
    AssessmentResults,
    CreatedLearner,
    NextAssessment,
    Response,
    SubmitReceipt,
)
from partner_api.parsing import (
    _CONTROL_CHARS,
    _parse_assessment_content,
    _parse_created_learner,
    _parse_next_assessment,
    _parse_results,
)
from partner_api.resilience import (
    DEFAULT_BACKOFF,
    DEFAULT_BACKOFF_CAP,
    DEFAULT_BREAKER_COOLDOWN,
    DEFAULT_BREAKER_THRESHOLD,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_RETRY_AFTER_CAP,
    DEFAULT_RETRY_BUDGET,
    CircuitBreaker,
    RetryPolicy,
    UpstreamStatus,
    breaker_for,
    check_breaker_settings,
    existing_breaker,
    status_of,
)
from partner_api.transport import (
    Reader,
    Transport,
    _read_submit_reply,
    _Request,
    read_json,
)

__all__ = [
    "CLIENT_SETTINGS",
    "DEFAULT_TIMEOUT",
    "PartnerApiClient",
    "get_client",
    "upstream_status",
]

DEFAULT_TIMEOUT = (3.05, 10.0)

_T = TypeVar("_T")


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
        self._transport = Transport(api_key)

    def __repr__(self) -> str:
        return f"<PartnerApiClient {self.base_url}>"

    def close(self) -> None:
        """Close the pooled connections."""
        self._transport.close()

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
        return status_of(existing_breaker(self._breaker_key))

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
        return self._call(endpoint, method, read_json(endpoint, parser), **request)

    @sensitive_variables()
    def _call(
        self,
        endpoint: str,
        method: str,
        read: Reader[_T],
        *,
        learner_id: str | None = None,
        assessment_id: int | None = None,
        params: Mapping[str, str] | None = None,
        json_body: Any = None,
        secrets: tuple[str, ...] = (),
    ) -> _T:
        """Build one call's request and make the call with the client's current settings."""
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
        # Made per call, so a call uses the settings the client has now.
        caller = Caller(
            transport=self._transport,
            base_url=self.base_url,
            timeout=self.timeout,
            policy=self.retry_policy,
            breaker=self.circuit_breaker,
            sleep=self._sleep,
            uniform=self._uniform,
            clock=self._clock,
        )
        return caller.call(request, read)

    def _secrets(self, learner_id: str | None, extra: tuple[str, ...]) -> tuple[str, ...]:
        """List the values that must never be echoed back from the upstream."""
        return tuple(value for value in (self._api_key, learner_id, *extra) if value)


# Checks of the configuration and the arguments ------------------------------------------------


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


# The process's client, from Django settings ---------------------------------------------------

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


def upstream_status(base_url: str | None = None) -> UpstreamStatus:
    """Say whether calls to the configured upstream (or `base_url`) fail fast; never does I/O."""
    if base_url is None:
        base_url = settings.PARTNER_API_BASE_URL
    try:
        breaker = existing_breaker(_breaker_key(base_url))
    except ValueError:  # a broken setting: get_client() reports it, a banner should not
        breaker = None
    return status_of(breaker)
