"""A strict stand-in for the Learner Assessment Partner API, served over real HTTP.

It implements the spec with the assumptions of DESIGN.md section 4 and keeps its own state in
memory, optionally saved to a JSON file after every change so that a restart (of `make run`, say)
still knows the learners the portal registered. It never imports the portal's apps: it is an
independent implementation of the spec. Faults (sandbox.faults) can be injected per endpoint,
from Python, the command line or the control API at /_sandbox/faults.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import random
import re
import secrets
import socket
import socketserver
import sys
import tempfile
import threading
import traceback
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from sandbox.bank import (
    ASSESSMENT_VERSION,
    ASSESSMENT_VERSION_DECIMAL,
    CREATED,
    DEFAULT_LEVEL,
    LEVELS,
    UPDATED,
    BankQuestion,
    questions_for_level,
)
from sandbox.faults import ENDPOINTS, JUNK_ASSESSMENT_ID, MISSING_FIELDS, FaultError, FaultSet
from sandbox.faults import STATUS_KINDS as _STATUS_KINDS
from sandbox.scoring import score_submission

DEMO_API_KEY = "sandbox-demo-key"
API_PREFIX = "/plapi/v1/partners"

STATUS_AVAILABLE = "AVAILABLE"
STATUS_NONE_AVAILABLE = "NO_ASSESSMENT_AVAILABLE"
STATUS_SUBMITTED = "SUBMITTED"

# The run-time fault control API; outside API_PREFIX, so it is never part of the partner API.
CONTROL_PATH = "/_sandbox/faults"

MAX_BODY_BYTES = 1_000_000
FIRST_ASSESSMENT_ID = 1001
STATE_FORMAT = 1  # the version of the state file's layout

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
_BODY_KEY = "sandbox.body"
_SOCKET_KEY = "sandbox.socket"  # the client's socket, so that a fault can drop it
_HANDLER_KEY = "sandbox.handler"  # the request handler, for its access log
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
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


class ApiError(Exception):
    """A refusal: an HTTP status with the message for the `{"error": ...}` body."""

    def __init__(self, status: int, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after


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


@dataclass
class SandboxLearner:
    """A learner registered with the sandbox (the password is never kept)."""

    user_id: str
    username: str
    dob: date
    level: str
    email: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    assessment_ids: list[int] = field(default_factory=list)


@dataclass
class Offer:
    """An assessment offered to one learner, and its answers and results once submitted."""

    assessment_id: int
    user_id: str
    level: str
    preassess: bool
    answers: dict[str, str] | None = None
    results: dict[str, Any] | None = None

    @property
    def submitted(self) -> bool:
        """Return whether the assessment has been submitted."""
        return self.answers is not None


class CorruptStateError(ValueError):
    """A state file that cannot be read back: not JSON, or not the shape the sandbox writes."""


class SandboxState:
    """The sandbox's world, kept in memory; every read and write happens under `lock`.

    With a `state_file`, `load` reads the world back and `save_if_changed` writes it after each
    change: learners, offered assessments with their answers and results, and sessions. The
    request log, the accepted-submission log and the fault rules (`faults`, see sandbox.faults)
    are for the running process only and are not saved.
    """

    def __init__(
        self,
        assessments_per_learner: int = 3,
        *,
        state_file: str | os.PathLike[str] | None = None,
        fault_seed: int | None = None,
    ) -> None:
        self.assessments_per_learner = assessments_per_learner
        self.state_file = Path(state_file) if state_file else None
        self.changed = False  # set by every change that a state file should keep
        self.lock = threading.RLock()
        self.learners: dict[str, SandboxLearner] = {}
        self.offers: dict[int, Offer] = {}
        self.sessions: dict[int, tuple[str, int]] = {}  # session -> (user_id, assessment_id)
        # (method, endpoint name, status sent; 0 for a connection dropped or left hanging)
        self.requests: list[tuple[str, str, int]] = []
        self.submissions: list[int] = []  # the assessment id of every submission accepted
        self.faults = FaultSet(fault_seed)
        self._next_assessment_id = FIRST_ASSESSMENT_ID
        self._next_request_number = 1

    def count(self, method: str | None = None, endpoint: str | None = None) -> int:
        """Return how many requests were received, optionally of one method and endpoint."""
        with self.lock:
            return sum(
                1
                for logged_method, logged_endpoint, _ in self.requests
                if (method is None or logged_method == method.upper())
                and (endpoint is None or logged_endpoint == endpoint)
            )

    def submissions_count(self, assessment_id: int | None = None) -> int:
        """Return how many submissions were accepted (recorded), optionally for one assessment.

        A submission answered with an injected error after it was recorded (processed_500)
        counts; one refused, or failed by a fault before any work, does not.
        """
        with self.lock:
            return sum(1 for accepted in self.submissions if assessment_id in (None, accepted))

    def inject_failure(
        self, endpoint: str, *, status: int = 503, times: int = 1, after_processing: bool = False
    ) -> None:
        """Make the next `times` calls to an endpoint fail with `status` (no Retry-After)."""
        # after_processing does the work first, like a reply lost after the upstream acted.
        if endpoint not in ENDPOINTS:
            raise ValueError(f"Unknown endpoint {endpoint!r}")
        if after_processing:
            self.faults.add(endpoint, "processed_500", status=status, times=times)
        elif str(status) in _STATUS_KINDS:
            self.faults.add(endpoint, str(status), retry_after=None, times=times)
        else:
            self.faults.add(endpoint, "error", status=status, times=times)

    def expire_sessions(self, user_id: str | None = None) -> None:
        """Forget the issued sessions (of one learner, or of everyone)."""
        with self.lock:
            for session, (owner, _) in list(self.sessions.items()):
                if user_id is None or owner == user_id:
                    del self.sessions[session]
                    self.changed = True
            self.save_if_changed()

    def next_request_id(self) -> str:
        """Return a fresh request id for the X-Request-Id header."""
        with self.lock:
            number = self._next_request_number
            self._next_request_number += 1
        return f"sbx-{number:06d}"

    def record(self, method: str, endpoint: str, status: int) -> None:
        """Log a handled request."""
        with self.lock:
            self.requests.append((method, endpoint, status))

    def new_assessment_id(self) -> int:
        """Return the next assessment id (unique across learners)."""
        with self.lock:
            assessment_id = self._next_assessment_id
            self._next_assessment_id += 1
            self.changed = True
            return assessment_id

    def new_session(self, user_id: str, assessment_id: int) -> int:
        """Issue a new all-digits session for a learner's assessment."""
        with self.lock:
            while True:
                # Twelve digits, no leading zero, so the string and integer forms round-trip.
                session = 10**11 + secrets.randbelow(9 * 10**11)
                if session not in self.sessions:
                    self.sessions[session] = (user_id, assessment_id)
                    self.changed = True
                    return session

    # Persistence. The file holds no password (the sandbox never keeps one) and no apikey.

    def to_json(self) -> dict[str, Any]:
        """Return the world that a state file keeps, as JSON-ready data."""
        with self.lock:
            return {
                "format": STATE_FORMAT,
                "next_assessment_id": self._next_assessment_id,
                "learners": [
                    {
                        "user_id": learner.user_id,
                        "username": learner.username,
                        "dob": learner.dob.isoformat(),
                        "level": learner.level,
                        "email": learner.email,
                        "first_name": learner.first_name,
                        "last_name": learner.last_name,
                        "assessment_ids": list(learner.assessment_ids),
                    }
                    for learner in self.learners.values()
                ],
                "offers": [
                    {
                        "assessment_id": offer.assessment_id,
                        "user_id": offer.user_id,
                        "level": offer.level,
                        "preassess": offer.preassess,
                        "answers": offer.answers,
                        "results": offer.results,
                    }
                    for offer in self.offers.values()
                ],
                "sessions": {
                    str(session): [owner, assessment_id]
                    for session, (owner, assessment_id) in self.sessions.items()
                },
            }

    def restore(self, data: Any) -> None:
        """Replace the world with one read from a state file, or raise CorruptStateError."""
        try:
            learners, offers, sessions, next_id = _parse_state(data)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise CorruptStateError(str(error) or type(error).__name__) from None
        with self.lock:
            self.learners, self.offers, self.sessions = learners, offers, sessions
            self._next_assessment_id = next_id
            self.changed = False

    def load(self) -> str | None:
        """Read the state file if there is one; return a warning if it could not be used.

        A missing file is a first start. A file that cannot be read or parsed leaves the world
        empty and is moved aside (to `<name>.corrupt`), so that the next save does not destroy
        what someone may want to look at; the sandbox never refuses to start because of it.
        """
        path = self.state_file
        if path is None:
            return None
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            return f"Cannot read the state file {path} ({error.strerror}); starting empty."
        try:
            self.restore(json.loads(raw))
        except (ValueError, RecursionError) as error:
            aside = path.with_name(path.name + ".corrupt")
            try:
                os.replace(path, aside)
            except OSError:
                moved = ""
            else:
                moved = f" It was moved to {aside}."
            return f"Ignoring the corrupt state file {path} ({error}); starting empty.{moved}"
        return None

    def save(self) -> None:
        """Write the world to the state file atomically: a temporary file, then os.replace."""
        path = self.state_file
        if path is None:
            return
        with self.lock:
            payload = json.dumps(self.to_json(), indent=1).encode()
            # Same directory, so os.replace is a rename on one file system: readers see the old
            # file or the new one, never half of one, even if the process dies mid-write.
            handle, temporary = tempfile.mkstemp(
                dir=path.parent, prefix=f"{path.name}.", suffix=".tmp"
            )
            try:
                with os.fdopen(handle, "wb") as file:
                    file.write(payload)
                    file.flush()
                    os.fsync(file.fileno())
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
            self.changed = False

    def save_if_changed(self) -> None:
        """Save after a change; a failed save is reported and retried after the next change."""
        with self.lock:
            if not self.changed or self.state_file is None:
                return
            try:
                self.save()
            except OSError as error:
                # The world in memory is still right, so keep serving; say why the file lags.
                sys.stderr.write(
                    f"sandbox: cannot save the state file {self.state_file}: {error}\n"
                )


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
        handler: str | None,
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
                status, body = getattr(self, handler)(environ, **params)
            finally:
                # Under the lock, so the file always matches a state some request left behind.
                self.state.save_if_changed()
        if kind == "processed_500":
            raise ApiError(fault.option("status"), "Injected failure")
        if kind == "non_json":
            return _html_reply()
        if kind == "missing_field":
            body = _without_field(body, endpoint, fault.option("field"))
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

    # Endpoints. Each runs under the state lock, so check-then-act sequences are atomic.

    def _create_learner(self, environ: dict[str, Any]) -> tuple[int, Any]:
        """Register a learner (4.1)."""
        query = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        level = query.get("level", [DEFAULT_LEVEL])[-1]
        if level not in LEVELS:
            raise ApiError(400, f"Unknown level {level!r}")
        body = _json_object(environ)
        username = _required_text(body, "username")
        if len(username) > 150:
            raise ApiError(400, "username must be at most 150 characters")
        password = _required_text(body, "password")
        dob = _parse_dob(_required_text(body, "dob"))
        if len(password) < 8:
            raise ApiError(400, "password must be at least 8 characters")
        email = _optional_text(body, "email")
        if email is not None and not _EMAIL.fullmatch(email):
            raise ApiError(400, "email must look like an e-mail address")
        first_name = _optional_text(body, "first_name")
        last_name = _optional_text(body, "last_name")
        taken = {learner.username.casefold() for learner in self.state.learners.values()}
        if username.casefold() in taken:
            raise ApiError(409, "username is already taken")
        user_id = str(uuid.uuid4())
        self.state.learners[user_id] = SandboxLearner(
            user_id, username, dob, level, email, first_name, last_name
        )
        self.state.changed = True
        return 201, {"user_id": user_id, "message": "Learner created"}

    def _next_assessment(self, environ: dict[str, Any]) -> tuple[int, Any]:
        """Offer the learner's current assessment, a new one, or none (4.2)."""
        learner = self._learner(environ)
        target_group = LEVELS[learner.level].target_group
        offers = [self.state.offers[assessment_id] for assessment_id in learner.assessment_ids]
        current = next((offer for offer in offers if not offer.submitted), None)
        if current is None and len(offers) < self.state.assessments_per_learner:
            current = Offer(
                assessment_id=self.state.new_assessment_id(),
                user_id=learner.user_id,
                level=learner.level,
                preassess=not offers,  # the first of a learner's sequence is the pre-assessment
            )
            self.state.offers[current.assessment_id] = current
            learner.assessment_ids.append(current.assessment_id)
        if current is None:
            return 200, {
                "status": STATUS_NONE_AVAILABLE,
                "assessment_id": None,
                "target_group": target_group,
                "assessment_version": None,
            }
        return 200, {
            "status": STATUS_AVAILABLE,
            "assessment_id": current.assessment_id,
            "target_group": target_group,
            "assessment_version": ASSESSMENT_VERSION,
        }

    def _view_assessment(self, environ: dict[str, Any], assessment_id: str) -> tuple[int, Any]:
        """Return an assessment's questions with a fresh session (4.3)."""
        learner = self._learner(environ)
        offer = self._offer(learner, assessment_id)
        session = self.state.new_session(learner.user_id, offer.assessment_id)
        questions = [_question_json(question) for question in questions_for_level(offer.level)]
        # The spec makes clients order by DisplayOrder; a stable shuffle keeps them honest.
        shuffler = random.Random(offer.assessment_id)
        shuffler.shuffle(questions)
        for question in questions:
            shuffler.shuffle(question["answers"])
        return 200, {
            "questions": questions,
            "assessment_session": str(session),
            "assessment_info": {
                "Title": LEVELS[offer.level].title,
                "Level": offer.level,
                "Preassess": offer.preassess,
                "Version": float(ASSESSMENT_VERSION_DECIMAL),
                "id": offer.assessment_id,
            },
        }

    def _submit_assessment(self, environ: dict[str, Any]) -> tuple[int, Any]:
        """Accept a complete, valid set of responses for a session (4.4)."""
        learner = self._learner(environ)
        body = _json_object(environ)
        session = _parse_session(body.get("session"))
        owner, assessment_id = self.state.sessions.get(session, (None, None))
        if owner != learner.user_id or assessment_id is None:
            raise ApiError(400, "Unknown or expired session")
        offer = self.state.offers[assessment_id]
        if offer.submitted:
            raise ApiError(409, "Assessment already submitted")
        chosen = _validate_responses(body.get("responses"), questions_for_level(offer.level))
        offer.answers = chosen
        offer.results = score_submission(chosen)
        self.state.submissions.append(offer.assessment_id)
        self.state.changed = True
        return 200, {
            "status": STATUS_SUBMITTED,
            "message": "Assessment submitted",
            "assessment_id": offer.assessment_id,
        }

    def _results(self, environ: dict[str, Any], assessment_id: str) -> tuple[int, Any]:
        """Return the scored results of a submitted assessment (4.5)."""
        learner = self._learner(environ)
        offer = self._offer(learner, assessment_id)
        if offer.results is None:
            raise ApiError(404, "No results for this assessment yet")
        return 200, offer.results

    def _learner(self, environ: dict[str, Any]) -> SandboxLearner:
        """Return the learner named by the learnerid header, or refuse with 404."""
        learner_id = environ.get("HTTP_LEARNERID", "")
        if not learner_id:
            raise ApiError(404, "Missing learnerid")
        learner = self.state.learners.get(learner_id)
        if learner is None:
            raise ApiError(404, "Unknown learner")
        return learner

    def _offer(self, learner: SandboxLearner, assessment_id: str) -> Offer:
        """Return one of the learner's offered assessments, or refuse with 404."""
        if not assessment_id.isdigit() or int(assessment_id) not in learner.assessment_ids:
            raise ApiError(404, "Assessment not found")
        return self.state.offers[int(assessment_id)]


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


def _parse_state(
    data: Any,
) -> tuple[dict[str, SandboxLearner], dict[int, Offer], dict[int, tuple[str, int]], int]:
    """Check and convert a state file's data; any surprise raises, and the file is corrupt."""
    if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
        raise ValueError("not a sandbox state file of a known format")
    learners: dict[str, SandboxLearner] = {}
    for item in data["learners"]:
        learner = SandboxLearner(
            user_id=_checked(item["user_id"], str),
            username=_checked(item["username"], str),
            dob=date.fromisoformat(_checked(item["dob"], str)),
            level=_checked_level(item["level"]),
            email=_checked(item["email"], str, optional=True),
            first_name=_checked(item["first_name"], str, optional=True),
            last_name=_checked(item["last_name"], str, optional=True),
            assessment_ids=[_checked(i, int) for i in item["assessment_ids"]],
        )
        learners[learner.user_id] = learner
    offers: dict[int, Offer] = {}
    for item in data["offers"]:
        answers = _checked(item["answers"], dict, optional=True)
        if answers is not None and not all(
            isinstance(key, str) and isinstance(value, str) for key, value in answers.items()
        ):
            raise ValueError("answers must map question ids to answer ids")
        offer = Offer(
            assessment_id=_checked(item["assessment_id"], int),
            user_id=_checked(item["user_id"], str),
            level=_checked_level(item["level"]),
            preassess=_checked(item["preassess"], bool),
            answers=answers,
            results=_checked(item["results"], dict, optional=True),
        )
        if (offer.answers is None) != (offer.results is None):
            raise ValueError(f"assessment {offer.assessment_id} has answers or results alone")
        offers[offer.assessment_id] = offer
    sessions: dict[int, tuple[str, int]] = {}
    for key, (owner, assessment_id) in _checked(data["sessions"], dict).items():
        session = _parse_session(key)
        if session is None:
            raise ValueError(f"bad session {key!r}")
        sessions[session] = (_checked(owner, str), _checked(assessment_id, int))
    # Every reference must lead somewhere, or a request would fail with a KeyError later.
    for learner in learners.values():
        for assessment_id in learner.assessment_ids:
            owned = offers.get(assessment_id)
            if owned is None or owned.user_id != learner.user_id:
                raise ValueError(f"learner {learner.user_id} has a stray assessment")
    for owner, assessment_id in sessions.values():
        if owner not in learners or assessment_id not in learners[owner].assessment_ids:
            raise ValueError("a session names an unknown learner or assessment")
    next_id = max(
        _checked(data["next_assessment_id"], int), max(offers, default=FIRST_ASSESSMENT_ID - 1) + 1
    )
    return learners, offers, sessions, next_id


def _checked(value: Any, kind: type, *, optional: bool = False) -> Any:
    """Return a value read from a state file if it has the expected type, else raise."""
    if value is None and optional:
        return None
    # bool is an int in Python, but never a valid id.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
    return value


def _checked_level(value: Any) -> str:
    """Return a known level code read from a state file, else raise."""
    if value not in LEVELS:
        raise ValueError(f"unknown level {value!r}")
    return str(value)


def _resolve(method: str, path: str) -> tuple[str, str | None, dict[str, str], ApiError | None]:
    """Return the endpoint name, handler method name, path parameters and any routing refusal."""
    if path.startswith(API_PREFIX):
        for endpoint, allowed, pattern in _ROUTES:
            match = pattern.fullmatch(path[len(API_PREFIX) :])
            if match is None:
                continue
            if method != allowed:
                return endpoint, None, {}, ApiError(405, "Method not allowed")
            return endpoint, "_" + endpoint.replace("-", "_"), match.groupdict(), None
    return "unknown", None, {}, ApiError(404, "Not found")


def _question_json(question: BankQuestion) -> dict[str, Any]:
    """Return a bank question in the spec's Question shape."""
    return {
        "id": question.id,
        "Question": question.text,
        "Group": question.group,
        "Created": CREATED,
        "DisplayOrder": question.display_order,
        "UpdatedDateTime": UPDATED,
        "answers": [
            {
                "id": answer.id,
                "Question": question.text,
                "QuestionId": question.id,
                "DisplayOrder": position,
                "AnswerCopy": answer.text,
                "Icon": answer.icon,
            }
            for position, answer in enumerate(question.answers, 1)
        ],
    }


def _read_body(environ: dict[str, Any]) -> bytes:
    """Read the raw request body, refusing a bad or oversized Content-Length."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise ApiError(400, "Invalid Content-Length") from None
    if length > MAX_BODY_BYTES:
        raise ApiError(413, "Request body too large")
    return environ["wsgi.input"].read(length) if length > 0 else b""


def _json_object(environ: dict[str, Any]) -> dict[str, Any]:
    """Parse the request body (read before the lock) as a JSON object, or refuse with 400."""
    try:
        body = json.loads(environ.get(_BODY_KEY, b""))
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "Request body must be valid JSON") from None
    if not isinstance(body, dict):
        raise ApiError(400, "Request body must be a JSON object")
    return body


def _required_text(body: dict[str, Any], name: str) -> str:
    """Return a required non-blank string field, or refuse with 400."""
    value = body.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ApiError(400, f"{name} is required")
    return value


def _optional_text(body: dict[str, Any], name: str) -> str | None:
    """Return an optional string field (absent or null gives None), or refuse with 400."""
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise ApiError(400, f"{name} must be a string")
    return value


def _parse_dob(value: str) -> date:
    """Return the date of birth from an ISO YYYY-MM-DD string in the past, or refuse with 400."""
    # date.fromisoformat alone would also take forms like 20100131, which we do not assume.
    if not _ISO_DATE.fullmatch(value):
        raise ApiError(400, "dob must be a date in the form YYYY-MM-DD")
    try:
        dob = date.fromisoformat(value)
    except ValueError:
        raise ApiError(400, "dob must be a valid date in the form YYYY-MM-DD") from None
    if dob >= date.today():
        raise ApiError(400, "dob must be in the past")
    return dob


def _parse_session(value: Any) -> int | None:
    """Return the session as an integer (a JSON integer or a string of digits), else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    return None


def _validate_responses(responses: Any, questions: tuple[BankQuestion, ...]) -> dict[str, str]:
    """Return question id -> answer id for exactly one valid answer per question, or refuse."""
    if not isinstance(responses, list):
        raise ApiError(400, "responses must be an array")
    if len(responses) != len(questions):
        raise ApiError(400, f"Expected {len(questions)} responses, got {len(responses)}")
    by_id = {question.id: question for question in questions}
    chosen: dict[str, str] = {}
    for item in responses:
        if not isinstance(item, dict):
            raise ApiError(400, "Each response must be an object with question_id and answer_id")
        question_id, answer_id = item.get("question_id"), item.get("answer_id")
        if not isinstance(question_id, str) or not isinstance(answer_id, str):
            raise ApiError(400, "Each response must have string question_id and answer_id")
        question = by_id.get(question_id)
        if question is None:
            raise ApiError(400, f"Unknown question {question_id!r}")
        if question_id in chosen:
            raise ApiError(400, f"Question {question_id!r} is answered more than once")
        if answer_id not in {answer.id for answer in question.answers}:
            raise ApiError(
                400, f"Answer {answer_id!r} is not an answer to question {question_id!r}"
            )
        chosen[question_id] = answer_id
    # Equal counts, known ids and no repeats mean no question is missing.
    return chosen


class SandboxRequestHandler(WSGIRequestHandler):
    """A request handler that prints one access line (method, path, status) or nothing."""

    quiet = False

    def get_environ(self) -> dict[str, Any]:
        """Return the WSGI environ, with the socket and handler a dropped connection needs."""
        environ = super().get_environ()
        environ[_SOCKET_KEY] = self.connection
        environ[_HANDLER_KEY] = self
        return environ

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Print the method, the path without its query string and the status."""
        if not self.quiet:
            path = self.path.split("?", 1)[0]
            sys.stderr.write(f"{self.command} {path} {code}\n")

    def log_message(self, format: str, *args: Any) -> None:
        """Print server messages unless quiet (never headers, so never the key)."""
        if not self.quiet:
            sys.stderr.write(f"sandbox: {format % args}\n")


class _QuietRequestHandler(SandboxRequestHandler):
    quiet = True


class SandboxServer(socketserver.ThreadingMixIn, WSGIServer):
    """A WSGI server with one daemon thread per request, so concurrent calls work.

    Closing it never waits for requests in flight: a request left hanging by a fault would
    otherwise hold up the shutdown. Such requests are woken and end without an answer.
    """

    daemon_threads = True
    block_on_close = False

    def server_close(self) -> None:
        """Wake any request that hangs or waits, then release the port."""
        app = self.get_app()
        if isinstance(app, SandboxApp):
            app.stopping.set()
        super().server_close()


def make_sandbox_server(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    api_key: str = DEMO_API_KEY,
    state: SandboxState | None = None,
    quiet: bool = False,
) -> SandboxServer:
    """Create (bind but do not start) a sandbox server; port 0 picks a free port."""
    app = SandboxApp(state or SandboxState(), api_key)
    handler = _QuietRequestHandler if quiet else SandboxRequestHandler
    return make_server(host, port, app, server_class=SandboxServer, handler_class=handler)


def base_url_of(server: SandboxServer) -> str:
    """Return the base URL of a bound server, API prefix included."""
    host, port = server.server_address[:2]
    return f"http://{host}:{port}{API_PREFIX}"


@dataclass
class RunningSandbox:
    """A sandbox serving in a background thread; stop it, or use it as a context manager."""

    server: SandboxServer
    thread: threading.Thread
    state: SandboxState

    @property
    def host(self) -> str:
        """Return the host the server is bound to."""
        return str(self.server.server_address[0])

    @property
    def port(self) -> int:
        """Return the port the server is bound to."""
        return int(self.server.server_address[1])

    @property
    def base_url(self) -> str:
        """Return the base URL, including the /plapi/v1/partners prefix."""
        return base_url_of(self.server)

    def stop(self) -> None:
        """Stop serving and release the port, without waiting for requests in flight."""
        app = self.server.get_app()
        if isinstance(app, SandboxApp):
            app.stopping.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)

    def __enter__(self) -> RunningSandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_sandbox(
    host: str = "127.0.0.1",
    port: int = 0,
    api_key: str = DEMO_API_KEY,
    assessments_per_learner: int = 3,
    *,
    quiet: bool = True,
    state_file: str | os.PathLike[str] | None = None,
    faults: Iterable[str] = (),
    seed: int | None = None,
) -> RunningSandbox:
    """Start a sandbox in a daemon thread and return it once it accepts connections.

    The state lives in memory only, unless `state_file` names a file to load it from (if it
    exists) and to save it to after every change. `faults` are rules in the compact form of
    sandbox.faults (`view-assessment=503:times=2`), drawn from `seed`.
    """
    state = SandboxState(
        assessments_per_learner=assessments_per_learner, state_file=state_file, fault_seed=seed
    )
    for spec in faults:
        state.faults.add_spec(spec)
    warning = state.load()
    if warning:
        sys.stderr.write(f"sandbox: {warning}\n")
    server = make_sandbox_server(host, port, api_key=api_key, state=state, quiet=quiet)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    # The socket is already listening after bind, so requests queue until the loop runs.
    return RunningSandbox(server, thread, state)
