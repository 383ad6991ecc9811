"""The five endpoints of the spec, as the sandbox answers them, and the reading of requests.

Owns what each endpoint checks and does to the world (sandbox.state) and the body it answers,
refusals as ApiError (an HTTP status and the message of the `{"error": ...}` body), and the
request checks they share: the body's size and JSON, required and optional fields, the date of
birth, the session and one valid answer per question. Each endpoint runs under the state lock
(sandbox.app takes it), so check-then-act sequences are atomic.
"""

from __future__ import annotations

import json
import random
import re
import uuid
from collections.abc import Callable
from datetime import date
from typing import Any
from urllib.parse import parse_qs

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
from sandbox.icons import icon_field, origin_of
from sandbox.scoring import score_submission
from sandbox.state import Offer, SandboxLearner, SandboxState, _parse_session

STATUS_AVAILABLE = "AVAILABLE"
STATUS_NONE_AVAILABLE = "NO_ASSESSMENT_AVAILABLE"
STATUS_SUBMITTED = "SUBMITTED"

MAX_BODY_BYTES = 1_000_000

_BODY_KEY = "sandbox.body"  # where the body read before the state lock waits in the environ
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


class ApiError(Exception):
    """A refusal: an HTTP status with the message for the `{"error": ...}` body."""

    def __init__(self, status: int, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after


# Endpoints: each takes the state and the WSGI environ, and returns (status, body).


def create_learner(state: SandboxState, environ: dict[str, Any]) -> tuple[int, Any]:
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
    taken = {learner.username.casefold() for learner in state.learners.values()}
    if username.casefold() in taken:
        raise ApiError(409, "username is already taken")
    user_id = str(uuid.uuid4())
    state.learners[user_id] = SandboxLearner(
        user_id, username, dob, level, email, first_name, last_name
    )
    state.changed = True
    return 201, {"user_id": user_id, "message": "Learner created"}


def next_assessment(state: SandboxState, environ: dict[str, Any]) -> tuple[int, Any]:
    """Offer the learner's current assessment, a new one, or none (4.2)."""
    learner = _learner(state, environ)
    target_group = LEVELS[learner.level].target_group
    offers = [state.offers[assessment_id] for assessment_id in learner.assessment_ids]
    current = next((offer for offer in offers if not offer.submitted), None)
    if current is None and len(offers) < state.assessments_per_learner:
        current = Offer(
            assessment_id=state.new_assessment_id(),
            user_id=learner.user_id,
            level=learner.level,
            preassess=not offers,  # the first of a learner's sequence is the pre-assessment
        )
        state.offers[current.assessment_id] = current
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


def view_assessment(
    state: SandboxState, environ: dict[str, Any], assessment_id: str
) -> tuple[int, Any]:
    """Return an assessment's questions with a fresh session (4.3)."""
    learner = _learner(state, environ)
    offer = _offer(state, learner, assessment_id)
    session = state.new_session(learner.user_id, offer.assessment_id)
    origin = origin_of(environ)  # the primary bank's pictures are addresses on this server
    questions = [_question_json(q, origin) for q in questions_for_level(offer.level)]
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


def submit_assessment(state: SandboxState, environ: dict[str, Any]) -> tuple[int, Any]:
    """Accept a complete, valid set of responses for a session (4.4)."""
    learner = _learner(state, environ)
    body = _json_object(environ)
    session = _parse_session(body.get("session"))
    owner, assessment_id = state.sessions.get(session, (None, None))
    if owner != learner.user_id or assessment_id is None:
        raise ApiError(400, "Unknown or expired session")
    offer = state.offers[assessment_id]
    if offer.submitted:
        state.refused_resubmissions.append(offer.assessment_id)
        raise ApiError(409, "Assessment already submitted")
    chosen = _validate_responses(body.get("responses"), questions_for_level(offer.level))
    offer.answers = chosen
    offer.results = score_submission(chosen, offer.level)
    state.submissions.append(offer.assessment_id)
    state.changed = True
    return 200, {
        "status": STATUS_SUBMITTED,
        "message": "Assessment submitted",
        "assessment_id": offer.assessment_id,
    }


def results(state: SandboxState, environ: dict[str, Any], assessment_id: str) -> tuple[int, Any]:
    """Return the scored results of a submitted assessment (4.5)."""
    learner = _learner(state, environ)
    offer = _offer(state, learner, assessment_id)
    if offer.results is None:
        raise ApiError(404, "No results for this assessment yet")
    return 200, offer.results


def _learner(state: SandboxState, environ: dict[str, Any]) -> SandboxLearner:
    """Return the learner named by the learnerid header, or refuse with 404."""
    learner_id = environ.get("HTTP_LEARNERID", "")
    if not learner_id:
        raise ApiError(404, "Missing learnerid")
    learner = state.learners.get(learner_id)
    if learner is None:
        raise ApiError(404, "Unknown learner")
    return learner


def _offer(state: SandboxState, learner: SandboxLearner, assessment_id: str) -> Offer:
    """Return one of the learner's offered assessments, or refuse with 404."""
    if not assessment_id.isdigit() or int(assessment_id) not in learner.assessment_ids:
        raise ApiError(404, "Assessment not found")
    return state.offers[int(assessment_id)]


Endpoint = Callable[..., tuple[int, Any]]

# Each endpoint's function, by the endpoint's name in sandbox.faults.ENDPOINTS.
ENDPOINT_HANDLERS: dict[str, Endpoint] = {
    "create-learner": create_learner,
    "next-assessment": next_assessment,
    "view-assessment": view_assessment,
    "submit-assessment": submit_assessment,
    "results": results,
}


# Reading requests -----------------------------------------------------------------------------


def _question_json(question: BankQuestion, origin: str) -> dict[str, Any]:
    """Return a bank question in the spec's Question shape, pictures addressed on `origin`."""
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
                "Icon": icon_field(answer.icon, origin),
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
