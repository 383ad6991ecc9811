"""What the upstream's replies say: bodies validated into the contract's dataclasses, and an
error reply's message, Retry-After and request id.

Owns the shape checks (a required field missing or of the wrong type is a _ShapeError naming its
path; unknown extra fields are ignored) and the _parse_* functions, one per kind of body, which
sort questions and answers by DisplayOrder; and reading an error reply's body and headers, with
any text taken from the upstream made safe to show: the values the call must never echo (the
API key, the learner id, a password) are redacted, control characters folded and the length
capped. Pure functions on data, bytes and header mappings: no HTTP library, no logging.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from email.utils import parsedate_to_datetime
from typing import Any

from partner_api.assumptions import (
    DECIMAL_LIMIT,
    DECIMAL_PLACES,
    ERROR_MESSAGE_FIELDS,
    ID_RANGE,
    IDENTIFIER_LIMIT,
    REQUEST_ID_HEADERS,
    SMALL_INT_RANGE,
)
from partner_api.contract import (
    Answer,
    AssessmentContent,
    AssessmentInfo,
    AssessmentResults,
    CreatedLearner,
    FocusArea,
    NextAssessment,
    Question,
)

# Bodies ---------------------------------------------------------------------------------------

_INTEGER = re.compile(r"-?[0-9]+")
# Also refused in the API key and learner ids the client sends, and folded out of messages.
_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]+")


class _ShapeError(Exception):
    """A response body that does not fit the expected shape; the message names the field path."""


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


# Error replies --------------------------------------------------------------------------------

UPSTREAM_MESSAGE_LIMIT = 300
REDACTED = "[redacted]"

# Keys of structured error details that may echo the submitted input (passwords included).
_ECHO_KEYS = frozenset({"input", "ctx", "url", "value", "password"})


def _request_id(headers: Mapping[str, str], secrets: tuple[str, ...]) -> str | None:
    """Read the upstream's request id header, if any."""
    for header in REQUEST_ID_HEADERS:
        value = headers.get(header)
        if value:
            return _clean_text(value, 100, secrets) or None
    return None


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Parse Retry-After (seconds or an HTTP date) into seconds from now."""
    value = headers.get("Retry-After", "").strip()
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


def _upstream_message(content: bytes, secrets: tuple[str, ...]) -> str | None:
    """Take a short message from a JSON error body's error/message/detail, if it has one."""
    try:
        data = json.loads(content)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    for field in ERROR_MESSAGE_FIELDS:
        rendered = _render_message(data.get(field), depth=0)
        if rendered:
            return _clean_text(rendered, UPSTREAM_MESSAGE_LIMIT, secrets) or None
    return None


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
