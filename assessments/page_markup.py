"""Markup of the learner's pages rendered once and reused: an attempt's content never changes.

A question page's fieldsets are rendered from the stored content once per attempt, content
version and layout (every page at once), with autoescaping on, and cached as text chunks with
gaps: one before the end of each radio input, and three per question for its error (a class,
the fieldset's reference to the message, the message). A request fills the gaps: ` checked`
from the chosen answers, and the errors of a page sent incomplete, so a clean page and a
page with errors come out of the same markup. (A result's section: results_markup.py.)

The fieldsets show the answers' pictures and offer audio that the portal fetches and makes in the
background, after the content is stored: markup rendered before every one is ready is unsettled
and kept only briefly (UNSETTLED_SECONDS), so a page picks them up soon after they arrive.
"""

import re
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from hashlib import blake2b
from typing import Protocol

from django.core.cache import cache
from django.template.loader import render_to_string
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from assessments.forms import field_name
from assessments.media import content_media_wanted
from assessments.models import AssessmentAttempt
from assessments.taking import PageLayout, QuestionPage, question_pages
from kit.icons import icon_symbol
from partner_api.pictures import picture_fetchable
from pictures.selectors import picture_urls, pictures_unasked, pictures_waiting
from speech.selectors import recording_urls, recordings_unasked, recordings_waiting

# Part of every cache key: bump it when the question templates below change, so a
# shared cache never serves markup of the previous release.
MARKUP_VERSION = 6
CACHE_TIMEOUT = 24 * 60 * 60  # markup is rebuilt in a few ms; a day keeps the cache lean
# Markup rendered while a picture or a recording was still on its way is rebuilt this often
# (a few ms and a few queries): only the first pupils to meet new content see it without
# them, for the seconds the media worker takes.
UNSETTLED_SECONDS = 5
# Markup rendered when one failed (it is tried again in minutes to days) is rebuilt this often.
FAILED_SECONDS = 10 * 60

# Pages of attempts viewed lately, also kept in this process: the shared cache hands back a
# copy that it unpickles on every page view (the bench's page of 22 questions costs about
# 90 us more CPU that way). Keys change with the content, so an entry is never stale; past
# the limit the oldest goes (that attempt's pages take about 30 KB).
# Each entry: (the time it is good until, None while settled; the pages).
RECENT_PAGES: dict[str, tuple[float | None, tuple["PageMarkup", ...]]] = {}
RECENT_PAGES_LIMIT = 64
_recent_pages_lock = threading.Lock()

QUESTION_TEMPLATE = "assessments/includes/questions.html"
QUESTION_ERRORS_TEMPLATE = "assessments/includes/question_errors.html"

# What fills a gap: the radio's " checked", or a part of its question's error.
CHECKED = "checked"
ERROR_CLASS = "error_class"
ERROR_REFERENCE = "error_reference"
ERROR_MESSAGE = "error_message"


# A place in a page's markup that a request fills in: (kind, the question's form field name,
# and for CHECKED the radio's question id and answer id). Plain tuples: every page view reads
# them back from the cache, and tuples unpickle over four times faster than objects.
Gap = tuple[str, str, str, str]


@dataclass(frozen=True)
class QuestionsMarkup:
    """A page's fieldsets as text chunks with gaps between them, and each question's label."""

    chunks: tuple[str, ...]  # one more than there are gaps
    gaps: tuple[Gap, ...]
    labels: tuple[tuple[str, str], ...]  # (field name, question text), in display order

    def render(
        self,
        chosen: Mapping[str, str | None],
        errors: Mapping[str, Sequence[str]] | None = None,
        errors_template: str = QUESTION_ERRORS_TEMPLATE,
    ) -> SafeString:
        """Return the fieldsets with the chosen answers checked and the errors shown."""
        parts = [self.chunks[0]]
        for (kind, field, question_id, answer_id), chunk in zip(
            self.gaps, self.chunks[1:], strict=True
        ):
            if kind == CHECKED:
                if chosen.get(question_id) == answer_id:
                    parts.append(" checked")
            elif errors and errors.get(field):
                parts.append(_error_part(kind, field, errors[field], errors_template))
            parts.append(chunk)
        # The chunks come from an autoescaped template; what fills the gaps is our own literal
        # or escaped markup.
        return mark_safe("".join(parts))  # noqa: S308

    def error_summary(self, errors: Mapping[str, Sequence[str]]) -> list[dict]:
        """Return the error summary's entries (link, message, question) in display order."""
        return [
            {"auto_id": _auto_id(name), "message": message, "label": label}
            for name, label in self.labels
            for message in errors.get(name, [])
        ]


def _auto_id(name: str) -> str:
    return f"id_{name}"  # Django's default auto_id, as the error summary links


def _error_part(kind: str, field: str, messages: Sequence[str], template: str) -> str:
    """Return the markup of one part of a question's error."""
    auto_id = _auto_id(field)
    if kind == ERROR_CLASS:
        return " field-error"
    if kind == ERROR_REFERENCE:
        return format_html(' aria-describedby="{}_error"', auto_id)
    # A template file ends with a newline that the page never had here.
    html = render_to_string(template, {"auto_id": auto_id, "errors": messages})
    return html.removesuffix("\n")


@dataclass(frozen=True)
class PageMarkup:
    """One page of an attempt: its number, heading and fieldsets."""

    number: int
    group: str
    questions: QuestionsMarkup


class VersionedAttempt(Protocol):
    """An attempt (or its snapshot) as far as its markup is concerned."""

    pk: int
    content_version: str


def attempt_pages_markup(attempt: VersionedAttempt, layout: PageLayout) -> tuple[PageMarkup, ...]:
    """Return every page of the attempt, rendered once per attempt content (none if empty)."""
    digest = blake2b(attempt.content_version.encode(), digest_size=12).hexdigest()
    # The pages hold translated text (the heading of a page without a Group) and audio in the
    # page's language: one per language, and one per layout (grouped or one question a page).
    shape = "one" if layout.one_per_screen else "grouped"
    key = f"assessments:pages:{MARKUP_VERSION}:{get_language()}:{shape}:{attempt.pk}:{digest}"
    entry = RECENT_PAGES.get(key)
    if entry is None or not _fresh(entry[0]):
        entry = cache.get(key)
        if entry is None or not _fresh(entry[0]):
            entry = _render_pages(attempt, layout)
            timeout = CACHE_TIMEOUT if entry[0] is None else UNSETTLED_SECONDS
            cache.set(key, entry, timeout)
        with _recent_pages_lock:
            RECENT_PAGES.pop(key, None)
            while len(RECENT_PAGES) >= RECENT_PAGES_LIMIT:
                del RECENT_PAGES[next(iter(RECENT_PAGES))]
            RECENT_PAGES[key] = entry
    return entry[1]


def _fresh(good_until: float | None) -> bool:
    return good_until is None or time.time() < good_until


def _render_pages(
    attempt: VersionedAttempt, layout: PageLayout
) -> tuple[float | None, tuple[PageMarkup, ...]]:
    """Render every page, with the pictures and recordings ready now; say until when it holds."""
    if not isinstance(attempt, AssessmentAttempt):
        attempt = AssessmentAttempt.objects.get(pk=attempt.pk)
    questions = attempt.questions
    # The only reads of the pictures and speech rooms: once per rendering, never per view.
    addresses = {a.icon for q in questions for a in q.answers if _is_address(a.icon)}
    texts = {q.text for q in questions} | {a.copy for q in questions for a in q.answers}
    texts = {text for text in texts if text.strip()}  # a blank text is never spoken
    pictures = picture_urls(addresses)
    recordings = recording_urls(texts, get_language())
    pages = tuple(
        PageMarkup(page.number, page.group, _render_questions_markup(page, pictures, recordings))
        for page in question_pages(attempt, layout)
    )
    if len(pictures) == len(addresses) and len(recordings) == len(texts):
        return None, pages  # everything is here: kept as long as any markup
    missing_pictures = addresses - set(pictures)
    missing_texts = texts - set(recordings)
    if pictures_unasked(missing_pictures) or recordings_unasked(missing_texts, get_language()):
        # Never asked for: content stored before the portal made media, or whose asking
        # failed. Asked now (it skips the rows that exist), so the next rendering finds them
        # on their way; without this the markup would be rebuilt every few seconds for ever.
        content_media_wanted(questions)
        waiting = True
    else:
        waiting = pictures_waiting(missing_pictures) or recordings_waiting(
            missing_texts, get_language()
        )
    return time.time() + (UNSETTLED_SECONDS if waiting else FAILED_SECONDS), pages


def _is_address(icon: str | None) -> bool:
    """Return whether an icon is an address the portal fetches (not a known name)."""
    return bool(icon) and icon_symbol(icon) is None and picture_fetchable(icon)


def _render_questions_markup(
    page: QuestionPage, pictures: Mapping[str, str], recordings: Mapping[str, str]
) -> QuestionsMarkup:
    """Render a page's fieldsets once, with a numbered marker in each gap."""
    # A random marker per rendering: upstream text cannot contain it by chance or design.
    marker = f"gap{secrets.token_hex(16)}"
    gaps: list[Gap] = []

    def gap(kind: str, field: str, question_id: str = "", answer_id: str = "") -> str:
        gaps.append((kind, field, question_id, answer_id))
        return f"{marker}_{len(gaps) - 1}_"

    fields = []
    for entry in page.questions:
        name = field_name(entry)
        auto_id = _auto_id(name)
        fields.append(
            {
                "name": name,
                "auto_id": auto_id,
                "label": entry.question.text,
                "audio": recordings.get(entry.question.text, ""),
                "error_class": gap(ERROR_CLASS, name),
                "error_reference": gap(ERROR_REFERENCE, name),
                "error_message": gap(ERROR_MESSAGE, name),
                "answers": [
                    {
                        "id": answer.id,
                        "copy": answer.copy,
                        "icon": answer.icon,
                        "picture": pictures.get(answer.icon or "", ""),
                        "audio": recordings.get(answer.copy, ""),
                        "input_id": f"{auto_id}_{number}",
                        "checked": gap(CHECKED, name, entry.question.id, answer.id),
                    }
                    for number, answer in enumerate(entry.question.answers, start=1)
                ],
            }
        )
    html = render_to_string(QUESTION_TEMPLATE, {"fields": fields})
    # The markers carry their gap's number: the chunks follow the template's order, whatever
    # order the template shows the gaps in.
    pieces = re.split(f"{marker}_(\\d+)_", html)
    order = [int(number) for number in pieces[1::2]]
    if sorted(order) != list(range(len(gaps))):
        raise ValueError(f"{QUESTION_TEMPLATE} must show each gap exactly once")
    return QuestionsMarkup(
        chunks=tuple(pieces[0::2]),
        gaps=tuple(gaps[number] for number in order),
        labels=tuple((field["name"], field["label"]) for field in fields),
    )


def progress_dots(
    pages: Sequence[PageMarkup], number: int, answers: Mapping[str, str | None]
) -> list[str]:
    """Return each question's dot, in order: "answered", "current" or "todo"."""
    dots = []
    for page in pages:
        offered: dict[str, list[str]] = {}
        for kind, _field, question_id, answer_id in page.questions.gaps:
            if kind == CHECKED:
                offered.setdefault(question_id, []).append(answer_id)
        for question_id, answer_ids in offered.items():
            if page.number == number:
                dots.append("current")
            else:
                dots.append("answered" if answers.get(question_id) in answer_ids else "todo")
    return dots
