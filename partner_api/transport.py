"""HTTP for the partner API client: the only module of the portal that imports requests.

Owns the keep-alive session (the API key on every request, no cookies kept, redirects never
followed), sending one request, and turning what comes back into a result or a PartnerApiError:
transport failures by their type (urllib3's too), statuses as the client contract says, and 2xx
bodies through a reader (JSON validated by a parser, or a submission's unspecified reply). It
never retries: calls.Caller decides that. (Files the portal fetches for itself, answer pictures,
go through partner_api.fetching.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.cookiejar import DefaultCookiePolicy
from typing import Any, TypeVar
from urllib.parse import urlsplit

import requests
from django.views.decorators.debug import sensitive_variables
from urllib3.exceptions import MaxRetryError, NewConnectionError, ProtocolError

from partner_api.assumptions import API_KEY_HEADER
from partner_api.contract import (
    PartnerApiBadResponse,
    PartnerApiError,
    PartnerApiRejected,
    PartnerApiServerError,
    PartnerApiUnavailable,
    SubmitReceipt,
)
from partner_api.parsing import _request_id, _retry_after, _ShapeError, _upstream_message

SUBMIT_TEXT_BODY_LIMIT = 2000
USER_AGENT = "partner-portal/0.1"
UNAVAILABLE_STATUSES = frozenset({429, 502, 503, 504})

_T = TypeVar("_T")

# Reads a 2xx reply (with the upstream's request id, if any) into what the call returns.
Reader = Callable[[requests.Response, str | None], _T]


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


class Transport:
    """One keep-alive pool to the upstream, carrying the API key on every request."""

    def __init__(self, api_key: str) -> None:
        self._session = requests.Session()
        self._session.headers.update(
            {API_KEY_HEADER: api_key, "Accept": "application/json", "User-Agent": USER_AGENT}
        )
        # One session serves every learner: never let an upstream cookie set for one learner
        # travel with another learner's requests.
        self._session.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))
        # The environment's proxy and CA bundle are read once per upstream address: requests
        # otherwise reads the whole environment (and ~/.netrc) on every request, about half a
        # millisecond of CPU a call in a worker. The API key is the only credential sent.
        self._session.trust_env = False
        self._environment: dict[tuple[str, str], dict[str, Any]] = {}

    def close(self) -> None:
        """Close the pooled connections."""
        self._session.close()

    def _settings_from_environment(self, url: str) -> dict[str, Any]:
        """Return the proxies and certificate checks the environment asks for at this address."""
        origin = urlsplit(url)[:2]
        if origin not in self._environment:
            reader = requests.Session()  # trusts the environment, as requests does by default
            try:
                settings = reader.merge_environment_settings(url, {}, None, None, None)
            finally:
                reader.close()
            self._environment[origin] = {
                key: settings[key] for key in ("proxies", "verify", "cert")
            }
        return self._environment[origin]

    @sensitive_variables()
    def exchange(
        self, request: _Request, timeout: tuple[float, float], read: Reader[_T]
    ) -> tuple[_T, int, str | None]:
        """Send one request; return what `read` makes of a 2xx, its status and request id.

        Anything else (no answer, another status, a body `read` refuses) raises PartnerApiError.
        """
        try:
            response = self._session.request(
                request.method,
                request.url,
                params=request.params,
                json=request.json_body,
                headers=request.headers,
                timeout=timeout,
                allow_redirects=False,
                **self._settings_from_environment(request.url),
            )
        except requests.RequestException as exc:
            raise _transport_error(request.endpoint, exc) from None

        request_id = _request_id(response.headers, request.secrets)
        error = _status_error(request.endpoint, response, request_id, request.secrets)
        if error is not None:
            raise error
        return read(response, request_id), response.status_code, request_id


# Readers --------------------------------------------------------------------------------------


def read_json(endpoint: str, parser: Callable[[Any], _T]) -> Reader[_T]:
    """Return a reader that validates a JSON body into a dataclass with the parser."""

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

    return read


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


# Failures -------------------------------------------------------------------------------------


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
    message = _upstream_message(response.content, secrets)
    if status in UNAVAILABLE_STATUSES:
        return PartnerApiUnavailable(
            endpoint,
            "upstream is rate limiting us" if status == 429 else None,
            retry_after=_retry_after(response.headers),
            upstream_message=message,
            **common,
        )
    if 400 <= status < 500:
        return PartnerApiRejected(endpoint, upstream_message=message, **common)
    if 500 <= status < 600:
        return PartnerApiServerError(endpoint, upstream_message=message, **common)
    return PartnerApiBadResponse(endpoint, "unexpected status", **common)
