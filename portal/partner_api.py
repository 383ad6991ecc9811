"""Client for the Learner Assessment Partner API: the only module of the portal that talks HTTP."""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from email.utils import parsedate_to_datetime
from http.cookiejar import DefaultCookiePolicy
from typing import Any, TypeVar
from urllib.parse import urlsplit

import requests
from urllib3.exceptions import MaxRetryError, NewConnectionError, ProtocolError

__all__ = [
    "Answer",
    "AssessmentContent",
    "AssessmentInfo",
    "AssessmentResults",
    "CreatedLearner",
    "FocusArea",
    "NextAssessment",
    "PartnerApiBadResponse",
    "PartnerApiClient",
    "PartnerApiError",
    "PartnerApiRejected",
    "PartnerApiServerError",
    "PartnerApiUnavailable",
    "Question",
    "Response",
    "SubmitReceipt",
    "get_client",
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
SMALL_INT_RANGE = (-(2**31), 2**31 - 1)
DECIMAL_LIMIT = Decimal(10) ** 8
DECIMAL_PLACES = Decimal("0.0001")
#
# - Timestamps (Created, UpdatedDateTime): ISO 8601 with an offset; a trailing Z is accepted,
#   a timestamp without an offset is taken as UTC, an unparseable one is dropped (None).
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


class _ShapeError(Exception):
    """A response body that does not fit the expected shape; the message names the field path."""


# The client -----------------------------------------------------------------------------------


class PartnerApiClient:
    """One partner's connection to the upstream, with a keep-alive pool shared by all calls."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        timeout: tuple[float, float] | float = DEFAULT_TIMEOUT,
    ) -> None:
        self.base_url = _normalise_base_url(base_url)
        if not isinstance(api_key, str) or not api_key.strip():
            raise ValueError("The partner API key is empty.")
        if _CONTROL_CHARS.search(api_key) or api_key != api_key.strip():
            raise ValueError("The partner API key contains whitespace or control characters.")
        self._api_key = api_key
        self.timeout = _normalise_timeout(timeout)
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

    # Endpoints --------------------------------------------------------------------------------

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
        response, _ = self._send("submit-assessment", "POST", learner_id=learner_id, json_body=body)
        return SubmitReceipt(status_code=response.status_code, body=_submit_reply_body(response))

    def results(self, learner_id: str, assessment_id: int) -> AssessmentResults:
        """Fetch the results of a submitted assessment."""
        return self._request_json(
            "results", _parse_results, "GET", learner_id=learner_id, assessment_id=assessment_id
        )

    # Plumbing ---------------------------------------------------------------------------------

    def _request_json(
        self, endpoint: str, parser: Callable[[Any], _T], method: str, **request: Any
    ) -> _T:
        """Send a request and validate its JSON body into a dataclass with the parser."""
        response, request_id = self._send(endpoint, method, **request)
        common: dict[str, Any] = {"status": response.status_code, "request_id": request_id}
        try:
            data = response.json()
        except ValueError:
            raise PartnerApiBadResponse(endpoint, detail="body is not JSON", **common) from None
        try:
            return parser(data)
        except _ShapeError as exc:
            raise PartnerApiBadResponse(endpoint, detail=str(exc), **common) from None

    def _send(
        self,
        endpoint: str,
        method: str,
        *,
        learner_id: str | None = None,
        assessment_id: int | None = None,
        params: Mapping[str, str] | None = None,
        json_body: Any = None,
        secrets: tuple[str, ...] = (),
    ) -> tuple[requests.Response, str | None]:
        """Send one request, log it, and return the response and request id on a 2xx."""
        path = ENDPOINT_PATHS[endpoint]
        if assessment_id is not None:
            path = path.format(assessment_id=_path_id(assessment_id))
        headers = {}
        if learner_id is not None:
            headers[LEARNER_ID_HEADER] = _header_learner_id(learner_id)
        secrets = self._secrets(learner_id, secrets)

        started = time.monotonic()
        try:
            response = self._session.request(
                method,
                self.base_url + path,
                params=params,
                json=json_body,
                headers=headers,
                timeout=self.timeout,
                allow_redirects=False,
            )
        except requests.RequestException as exc:
            error = _transport_error(endpoint, exc)
            _log_call(endpoint, method, error.reason, started, None)
            raise error from None

        request_id = _request_id(response, secrets)
        _log_call(endpoint, method, str(response.status_code), started, request_id)
        error = _status_error(endpoint, response, request_id, secrets)
        if error is not None:
            raise error
        return response, request_id

    def _secrets(self, learner_id: str | None, extra: tuple[str, ...]) -> tuple[str, ...]:
        """List the values that must never be echoed back from the upstream."""
        return tuple(value for value in (self._api_key, learner_id, *extra) if value)


# Settings -------------------------------------------------------------------------------------

_cached_client: tuple[tuple[str, str, tuple[float, float]], PartnerApiClient] | None = None
_cache_lock = threading.Lock()


def get_client() -> PartnerApiClient:
    """Return the process's client for the configured upstream, rebuilt if settings changed."""
    global _cached_client
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    base_url = settings.PARTNER_API_BASE_URL
    api_key = settings.PARTNER_API_KEY
    timeout = getattr(settings, "PARTNER_API_TIMEOUT", DEFAULT_TIMEOUT)
    with _cache_lock:
        try:
            key = (base_url, api_key, _normalise_timeout(timeout))
            if _cached_client is not None and _cached_client[0] == key:
                return _cached_client[1]
            client = PartnerApiClient(base_url, api_key, timeout)
        except ValueError as exc:
            raise ImproperlyConfigured(f"PARTNER_API_* settings: {exc}") from None
        # The old client is left to the garbage collector: another thread may still use it.
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


def _log_call(
    endpoint: str, method: str, outcome: str, started: float, request_id: str | None
) -> None:
    """Log one line per call: never headers, bodies, query values or identifiers of people."""
    latency_ms = round((time.monotonic() - started) * 1000)
    logger.info(
        "partner API %s %s -> %s in %d ms (request id %s)",
        endpoint,
        method,
        outcome,
        latency_ms,
        request_id or "-",
    )


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
    except ValueError:
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


def _submit_reply_body(response: requests.Response) -> dict | list | str | None:
    """Keep the unspecified reply to a submission: JSON if it is JSON, else short text."""
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
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
    return value


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
    return value


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
