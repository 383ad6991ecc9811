"""The client contract's data and errors: what callers get back, send, or catch.

Owns the dataclasses of the contract (snake_case fields mirroring the spec, questions and
answers already in display order) and PartnerApiError with the kinds of failure under it. Every
error names the endpoint, and carries the HTTP status and the upstream's request id when there
were any; str() of an error is a sentence safe for logs and staff (it never holds the API key, a
learner id or a password). Nothing here knows about HTTP or JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

__all__ = [
    "Answer",
    "AssessmentContent",
    "AssessmentInfo",
    "AssessmentResults",
    "CreatedLearner",
    "FocusArea",
    "NextAssessment",
    "PartnerApiBadResponse",
    "PartnerApiCircuitOpen",
    "PartnerApiError",
    "PartnerApiRejected",
    "PartnerApiServerError",
    "PartnerApiUnavailable",
    "Question",
    "Response",
    "SubmitReceipt",
]


# Data -----------------------------------------------------------------------------------------


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
