"""Markup of the learner's pages rendered once and reused: an attempt's content never changes.

A question page's fieldsets are rendered from the stored content once per attempt and content
version (every page at once), with autoescaping on, and cached as text chunks with a gap before
the end of each radio input; a request fills the gaps with ` checked` from the learner's saved
answers.
A page with errors (a POST with unanswered questions) is rendered whole, from the same
template. A result's section is rendered once per result.
"""

import secrets
from dataclasses import dataclass
from hashlib import blake2b

from django.core.cache import cache
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from assessments.forms import field_name
from assessments.models import AssessmentAttempt, AssessmentResult
from assessments.taking import AttemptSnapshot, QuestionPage, ResultsSnapshot, question_pages
from portal.partner_api import Answer, Question

# Part of every cache key: bump it when templates/includes/question.html or results.html
# change, so a shared cache never serves markup of the previous release.
MARKUP_VERSION = 2
CACHE_TIMEOUT = 24 * 60 * 60  # markup is rebuilt in a few ms; a day keeps the cache lean

QUESTION_TEMPLATE = "assessments/includes/questions.html"
RESULTS_TEMPLATE = "includes/results.html"


@dataclass(frozen=True)
class QuestionsMarkup:
    """A page's fieldsets as text, with a gap for ` checked` before each radio's `>`."""

    chunks: tuple[str, ...]  # one more than there are gaps
    gaps: tuple[tuple[str, str], ...]  # (question id, answer id) of each radio, in order

    def render(self, chosen: dict[str, str]) -> SafeString:
        """Return the fieldsets with the learner's chosen answers checked."""
        parts = [self.chunks[0]]
        for (question_id, answer_id), chunk in zip(self.gaps, self.chunks[1:], strict=True):
            if chosen.get(question_id) == answer_id:
                parts.append(" checked")
            parts.append(chunk)
        # The chunks come from an autoescaped template; " checked" is our own literal.
        return mark_safe("".join(parts))  # noqa: S308


def question_fields(
    page: QuestionPage, *, checked, errors: dict[str, list[str]] | None = None
) -> list[dict]:
    """Return what the question template shows of each question, in display order.

    `checked(question, answer)` returns what follows the radio's value: " checked", "" or a
    gap marker.
    """
    errors = errors or {}
    fields = []
    for entry in page.questions:
        name = field_name(entry)
        auto_id = f"id_{name}"  # Django's default auto_id, as the form's error summary links
        fields.append(
            {
                "name": name,
                "auto_id": auto_id,
                "label": entry.question.text,
                "errors": list(errors.get(name, [])),
                "answers": [
                    {
                        "id": answer.id,
                        "copy": answer.copy,
                        "icon": answer.icon,
                        "input_id": f"{auto_id}_{number}",
                        "checked": checked(entry.question, answer),
                    }
                    for number, answer in enumerate(entry.question.answers, start=1)
                ],
            }
        )
    return fields


@dataclass(frozen=True)
class PageMarkup:
    """One page of an attempt: its number, heading and fieldsets."""

    number: int
    group: str
    questions: QuestionsMarkup


def attempt_pages_markup(snapshot: AttemptSnapshot) -> tuple[PageMarkup, ...]:
    """Return every page of the attempt, rendered once per attempt content (none if empty)."""
    digest = blake2b(snapshot.content_version.encode(), digest_size=12).hexdigest()
    # The pages hold translated text (the heading of a page without a Group): one per language.
    key = f"assessments:pages:{MARKUP_VERSION}:{get_language()}:{snapshot.pk}:{digest}"
    pages = cache.get(key)
    if pages is None:
        attempt = AssessmentAttempt.objects.get(pk=snapshot.pk)
        pages = tuple(
            PageMarkup(page.number, page.group, _render_questions_markup(page))
            for page in question_pages(attempt)
        )
        cache.set(key, pages, CACHE_TIMEOUT)
    return pages


def _render_questions_markup(page: QuestionPage) -> QuestionsMarkup:
    # A random marker per rendering: upstream text cannot contain it by chance or design.
    marker = f"gap{secrets.token_hex(16)}"
    gaps = []

    def gap(question: Question, answer: Answer) -> str:
        gaps.append((question.id, answer.id))
        return marker

    html = render_to_string(QUESTION_TEMPLATE, {"fields": question_fields(page, checked=gap)})
    chunks = tuple(html.split(marker))
    return QuestionsMarkup(chunks=chunks, gaps=tuple(gaps))


def questions_with_errors(
    page: QuestionPage, *, chosen: dict[str, str | None], errors: dict[str, list[str]]
) -> dict:
    """Return the fieldsets and the error summary of a page with errors (never cached)."""

    def checked(question: Question, answer: Answer) -> str:
        return " checked" if chosen.get(question.id) == answer.id else ""

    fields = question_fields(page, checked=checked, errors=errors)
    return {
        "questions_html": render_to_string(QUESTION_TEMPLATE, {"fields": fields}),
        "error_summary": [
            {"auto_id": field["auto_id"], "message": message, "label": field["label"]}
            for field in fields
            for message in field["errors"]
        ],
    }


def results_markup(snapshot: ResultsSnapshot) -> SafeString:
    """Return a result's section, rendered once per stored result (results never change)."""
    digest = blake2b(snapshot.result_version.encode(), digest_size=12).hexdigest()
    key = f"assessments:results:{MARKUP_VERSION}:{get_language()}:{snapshot.result_pk}:{digest}"
    html = cache.get(key)
    if html is None:
        result = AssessmentResult.objects.get(pk=snapshot.result_pk)
        html = str(render_to_string(RESULTS_TEMPLATE, {"result": result}))
        cache.set(key, html, CACHE_TIMEOUT)
    # Rendered by an autoescaped template from the stored (sanitized) fields.
    return mark_safe(html)  # noqa: S308
