"""The data the partner API client returns to callers (and takes for a submission).

Owns the dataclasses of the client contract: snake_case fields mirroring the spec, questions and
answers already in display order. Nothing here knows about HTTP or JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

__all__ = [
    "Answer",
    "AssessmentContent",
    "AssessmentInfo",
    "AssessmentResults",
    "CreatedLearner",
    "FocusArea",
    "NextAssessment",
    "Question",
    "Response",
    "SubmitReceipt",
]


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
