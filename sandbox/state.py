"""The sandbox's world: its learners, offered assessments, sessions and logs, and the state file.

Owns SandboxState (everything kept in memory under one lock, and the fault rules of
sandbox.faults), the records it holds, and persistence: the atomic write of the state file after
each change and the checked read back at start, which sets a corrupt file aside instead of
failing. No HTTP here: sandbox.app serves the world, sandbox.endpoints changes it.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from sandbox.bank import LEVELS
from sandbox.faults import ENDPOINTS, FaultSet
from sandbox.faults import STATUS_KINDS as _STATUS_KINDS

FIRST_ASSESSMENT_ID = 1001
STATE_FORMAT = 1  # the version of the state file's layout


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
        # The assessment id of every resend refused because the assessment was submitted.
        self.refused_resubmissions: list[int] = []
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


def _parse_session(value: Any) -> int | None:
    """Return the session as an integer (a JSON integer or a string of digits), else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    return None
