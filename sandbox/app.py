"""The sandbox's WSGI application: routing, the apikey, injected faults and the control API.

Owns SandboxApp: it routes each request to one of the five endpoints (sandbox.endpoints), to
the fault control API at /_sandbox/faults or to the primary bank's pictures (sandbox.icons),
refuses a wrong apikey before anything else, applies the fault rule that matches
(sandbox.faults: latency, error statuses, hang, drop, non-JSON, missing fields, expired
sessions), runs the endpoint under the state lock and saves the state after it, logs the
request, and writes the reply. Serving it over HTTP is sandbox.server's job.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import re
import socket
import threading
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from sandbox.endpoints import (
    _BODY_KEY,
    ENDPOINT_HANDLERS,
    ApiError,
    Endpoint,
    _json_object,
    _read_body,
)
from sandbox.faults import JUNK_ASSESSMENT_ID, MISSING_FIELDS, FaultError
from sandbox.faults import STATUS_KINDS as _STATUS_KINDS
from sandbox.icons import ICONS_PATH, serve_icon
from sandbox.inspection import SUBMISSIONS_PATH, submissions_report
from sandbox.state import SandboxState

DEMO_API_KEY = "sandbox-demo-key"
API_PREFIX = "/plapi/v1/partners"

# The run-time fault control API; outside API_PREFIX, so it is never part of the partner API.
CONTROL_PATH = "/_sandbox/faults"

# (endpoint name, method, path pattern below API_PREFIX); the id is checked later so that a
# non-numeric id reads as "assessment not found" rather than an unknown path.
_ROUTES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("create-learner", "POST", re.compile(r"/users/create-learner")),
    ("next-assessment", "GET", re.compile(r"/assessments/next-assessment")),
    (
        "view-assessment",
        "GET",
        re.compile(r"/assessments/view-assessment/(?P<assessment_id>[^/]+)"),
    ),
    ("submit-assessment", "POST", re.compile(r"/assessments/submit-assessment")),
    ("results", "GET", re.compile(r"/assessments/results/(?P<assessment_id>[^/]+)")),
)

_ALLOWED_METHODS = {endpoint: method for endpoint, method, _ in _ROUTES}
_SOCKET_KEY = "sandbox.socket"  # the client's socket, so that a fault can drop it
_HANDLER_KEY = "sandbox.handler"  # the request handler, for its access log
_REASONS = {
    200: "OK",
    201: "Created",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Content Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


class DropConnection(ConnectionAbortedError):
    """Close the connection without an answer (wsgiref's handler ends such a request quietly)."""


@dataclass
class Reply:
    """A response to send: a status with a JSON body, or with raw bytes of a content type."""

    status: int
    body: Any = None
    raw: bytes | None = None
    content_type: str = "application/json"
    retry_after: int | None = None


class SandboxApp:
    """The WSGI application: routing, authentication, fault injection and the five endpoints."""

    def __init__(self, state: SandboxState, api_key: str = DEMO_API_KEY) -> None:
        self.state = state
        self.api_key = api_key
        # Set when the server closes, so requests that hang or wait end at once.
        self.stopping = threading.Event()

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        """Handle one request and return its body (JSON, unless a fault says otherwise)."""
        method = environ.get("REQUEST_METHOD", "GET").upper()
        path = environ.get("PATH_INFO", "")
        if path == CONTROL_PATH or path.startswith(CONTROL_PATH + "/"):
            return self._control(method, path, environ, start_response)
        if path == SUBMISSIONS_PATH:
            return self._inspect(method, environ, start_response)
        if path.startswith(ICONS_PATH):
            # Pictures, as a CDN would serve them: no key, no faults, never logged as API calls.
            return serve_icon(method, path, start_response)
        request_id = self.state.next_request_id()
        endpoint, handler, params, refusal = _resolve(method, path)
        try:
            reply = self._dispatch(method, endpoint, handler, params, refusal, environ)
        except DropConnection:
            raise  # recorded already; wsgiref ends the request without a word
        except ApiError as error:
            reply = Reply(error.status, {"error": error.message}, retry_after=error.retry_after)
        except Exception:
            # A stand-in must still answer JSON when it has a bug; the traceback helps fix it.
            traceback.print_exc()
            reply = Reply(500, {"error": "Internal error"})
        self.state.record(method, endpoint, reply.status)
        allow = _ALLOWED_METHODS[endpoint] if reply.status == 405 else None
        return _respond(start_response, reply, request_id=request_id, allow=allow)

    def _dispatch(
        self,
        method: str,
        endpoint: str,
        handler: Endpoint | None,
        params: dict[str, str],
        refusal: ApiError | None,
        environ: dict[str, Any],
    ) -> Reply:
        """Check the API key, refuse bad routes, apply any injected fault, run the handler."""
        # The key is checked before anything else, as a gateway in front of an API would.
        self._check_key(environ)
        if refusal is not None or handler is None:
            raise refusal or ApiError(404, "Not found")
        fault = self.state.faults.take(endpoint)
        kind = fault.kind if fault else None
        # Read the body before taking the lock, so a slow client cannot hold up the others;
        # and before a drop or hang, so the client has sent all it meant to.
        if method == "POST":
            environ[_BODY_KEY] = _read_body(environ)
        if fault is not None and kind in ("hang", "drop"):
            self.state.record(method, endpoint, 0)
            if kind == "hang":
                self.stopping.wait(fault.option("seconds"))
            _drop_connection(environ, "hung up" if kind == "hang" else "dropped")
        if kind == "latency":
            self.stopping.wait(fault.option("ms") / 1000)
        elif kind in _STATUS_KINDS or kind == "error":
            status = _STATUS_KINDS.get(kind) or fault.option("status")
            raise ApiError(status, "Injected failure", retry_after=fault.option("retry_after"))
        elif kind == "expired_session":
            # As if the sessions had run out just now: a fresh view is needed to submit.
            learner_id = environ.get("HTTP_LEARNERID", "")
            if learner_id:
                self.state.expire_sessions(learner_id)
            raise ApiError(400, "Unknown or expired session")
        elif kind == "non_json" and not fault.option("processed"):
            return _html_reply()
        with self.state.lock:
            try:
                status, body = handler(self.state, environ, **params)
            finally:
                # Under the lock, so the file always matches a state some request left behind.
                self.state.save_if_changed()
        if kind == "processed_500":
            raise ApiError(fault.option("status"), "Injected failure")
        if kind == "non_json":
            return _html_reply()
        if kind == "missing_field":
            body = _without_field(body, endpoint, fault.option("field"))
        if kind == "relabel" and status == 200:
            body = _relabelled(body, fault.option("needs_help"), fault.option("risk_level"))
        return Reply(status, body)

    def _check_key(self, environ: dict[str, Any]) -> None:
        """Refuse a request without the right apikey header."""
        given_key = environ.get("HTTP_APIKEY", "")
        if not hmac.compare_digest(given_key.encode(), self.api_key.encode()):
            raise ApiError(401, "Missing or invalid apikey")

    # The fault control API: GET lists, POST adds, DELETE clears. Never logged as a request.

    def _control(
        self,
        method: str,
        path: str,
        environ: dict[str, Any],
        start_response: Callable[..., Any],
    ) -> Iterable[bytes]:
        """Answer a request to the fault control API."""
        rest = path[len(CONTROL_PATH) :].strip("/")
        if rest == "":
            allowed = "GET, POST, DELETE"
        elif rest == "seed":
            allowed = "POST"
        elif rest.isdigit():
            allowed = "DELETE"
        else:
            allowed = ""
        try:
            self._check_key(environ)
            if not allowed:
                raise ApiError(404, "Not found")
            if method not in allowed.split(", "):
                raise ApiError(405, "Method not allowed")
            reply = self._control_reply(method, rest, environ)
        except ApiError as error:
            reply = Reply(error.status, {"error": error.message})
        except FaultError as error:
            reply = Reply(400, {"error": str(error)})
        return _respond(start_response, reply, allow=allowed if reply.status == 405 else None)

    def _inspect(
        self, method: str, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        """Answer the read-only submissions report (sandbox.inspection); never logged."""
        try:
            self._check_key(environ)
            if method != "GET":
                raise ApiError(405, "Method not allowed")
            reply = Reply(200, submissions_report(self.state))
        except ApiError as error:
            reply = Reply(error.status, {"error": error.message})
        return _respond(start_response, reply, allow="GET" if reply.status == 405 else None)

    def _control_reply(self, method: str, rest: str, environ: dict[str, Any]) -> Reply:
        """Carry out a control request that passed the key and method checks."""
        faults = self.state.faults
        if rest.isdigit():
            if not faults.remove(int(rest)):
                raise ApiError(404, f"No fault rule {rest}")
            return Reply(200, {"removed": int(rest)})
        if method == "GET":
            return Reply(200, {"seed": faults.seed, "rules": faults.rules()})
        if method == "DELETE":
            return Reply(200, {"cleared": faults.clear()})
        environ[_BODY_KEY] = _read_body(environ)
        body = _json_object(environ)
        if rest == "seed":
            seed = body.get("seed")
            if set(body) != {"seed"} or not isinstance(seed, int) or isinstance(seed, bool):
                raise ApiError(400, 'Expected {"seed": <integer>}')
            faults.reseed(seed)
            return Reply(200, {"seed": seed})
        if "spec" in body:
            if set(body) != {"spec"} or not isinstance(body["spec"], str):
                raise ApiError(400, 'Expected {"spec": "ENDPOINT=KIND:OPTIONS"} alone')
            return Reply(201, {"rule": faults.add_spec(body["spec"])})
        options = {name: value for name, value in body.items() if name not in ("endpoint", "kind")}
        if "endpoint" not in body or "kind" not in body:
            raise ApiError(400, "endpoint and kind are required")
        return Reply(201, {"rule": faults.add(body["endpoint"], body["kind"], **options)})


def _respond(
    start_response: Callable[..., Any],
    reply: Reply,
    *,
    request_id: str | None = None,
    allow: str | None = None,
) -> list[bytes]:
    """Start the response for a reply and return its body."""
    payload = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
    headers = [("Content-Type", reply.content_type), ("Content-Length", str(len(payload)))]
    if request_id is not None:
        headers.append(("X-Request-Id", request_id))
    if allow:
        headers.append(("Allow", allow))
    if reply.retry_after is not None:
        headers.append(("Retry-After", str(reply.retry_after)))
    start_response(f"{reply.status} {_REASONS.get(reply.status, 'Error')}", headers)
    return [payload]


_HTML_PAGE = b"""<!DOCTYPE html>
<html><head><title>Scheduled maintenance</title></head>
<body><h1>We'll be back soon</h1><p>The service is undergoing maintenance.</p></body></html>
"""


def _relabelled(body: Any, needs_help: str | None, risk_level: str | None) -> Any:
    """Return results with other labels: needs_help for areas needing help, the RiskLevel."""
    if not isinstance(body, dict):
        return body
    body = dict(body)
    if risk_level is not None:
        body["RiskLevel"] = risk_level
    if needs_help is not None:
        body["focus_areas"] = [
            {**area, "needs_help": needs_help} if area.get("needs_help") != "no" else area
            for area in body.get("focus_areas", [])
        ]
    return body


def _html_reply() -> Reply:
    """Return a 200 with an HTML page, as a misconfigured proxy or a maintenance page sends."""
    return Reply(200, raw=_HTML_PAGE, content_type="text/html; charset=utf-8")


def _without_field(body: Any, endpoint: str, field_name: str | None) -> Any:
    """Return a success body less one required field (or, for next-assessment, mangled)."""
    if not isinstance(body, dict):
        return body
    body = dict(body)
    if field_name is not None:
        body.pop(field_name, None)
    elif endpoint == "next-assessment":
        # Without assessment_id it would read as "none available", a valid answer.
        body.pop("status", None)
        body["assessment_id"] = JUNK_ASSESSMENT_ID
    else:
        body.pop(MISSING_FIELDS[endpoint], None)
    return body


def _drop_connection(environ: dict[str, Any], note: str) -> None:
    """Close the client's connection with no response at all, and end the request."""
    connection = environ.get(_SOCKET_KEY)
    if connection is not None:
        with contextlib.suppress(OSError):  # the client may be gone already
            connection.shutdown(socket.SHUT_RDWR)
    request_handler = environ.get(_HANDLER_KEY)
    if request_handler is not None:
        request_handler.log_request(note)
    raise DropConnection(note)


def _resolve(
    method: str, path: str
) -> tuple[str, Endpoint | None, dict[str, str], ApiError | None]:
    """Return the endpoint name, its function, the path parameters and any routing refusal."""
    if path.startswith(API_PREFIX):
        for endpoint, allowed, pattern in _ROUTES:
            match = pattern.fullmatch(path[len(API_PREFIX) :])
            if match is None:
                continue
            if method != allowed:
                return endpoint, None, {}, ApiError(405, "Method not allowed")
            return endpoint, ENDPOINT_HANDLERS[endpoint], match.groupdict(), None
    return "unknown", None, {}, ApiError(404, "Not found")
