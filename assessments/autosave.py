"""The autosave's cheap path: each page's valid choices, kept per attempt content.

Autosave is more than half of a learner's requests (one per answer chosen). Reading the
attempt's content and building its pages and a form for each would cost more than the rest of
the request, so the choices each page accepts (field name -> question id and answer ids) are
worked out once per attempt content and layout, and kept in this process and the shared cache,
as the pages' markup is (assessments.page_markup).
"""

from __future__ import annotations

import threading
from hashlib import blake2b
from typing import Protocol

from django.core.cache import cache

from assessments.forms import field_name
from assessments.models import AssessmentAttempt
from assessments.taking import PageLayout, question_pages

# field name ("q3") -> (question id, the answer ids it may take), one mapping per page
PageChoices = dict[str, tuple[str, frozenset[str]]]

CACHE_TIMEOUT = 24 * 60 * 60
RECENT_LIMIT = 2048  # a few hundred bytes each: every attempt a whole school has open
_recent: dict[str, tuple[PageChoices, ...]] = {}
_recent_lock = threading.Lock()


class VersionedAttempt(Protocol):
    pk: int
    content_version: str


class InvalidChoice(Exception):
    """A choice names an answer its question does not have, or no question of the page."""


def attempt_page_choices(attempt: VersionedAttempt, layout: PageLayout) -> tuple[PageChoices, ...]:
    """Return each page's choices (none if the attempt has no content), read once per content."""
    digest = blake2b(attempt.content_version.encode(), digest_size=12).hexdigest()
    shape = "one" if layout.one_per_screen else "grouped"
    key = f"assessments:choices:1:{shape}:{attempt.pk}:{digest}"
    pages = _recent.get(key)
    if pages is None:
        pages = cache.get(key)
        if pages is None:
            pages = _page_choices(attempt.pk, layout)
            cache.set(key, pages, CACHE_TIMEOUT)
        with _recent_lock:
            while len(_recent) >= RECENT_LIMIT:
                del _recent[next(iter(_recent))]
            _recent[key] = pages
    return pages


def _page_choices(attempt_pk: int, layout: PageLayout) -> tuple[PageChoices, ...]:
    attempt = AssessmentAttempt.objects.get(pk=attempt_pk)
    if not attempt.has_content:
        return ()
    return tuple(
        {
            field_name(entry): (
                entry.question.id,
                frozenset(answer.id for answer in entry.question.answers),
            )
            for entry in page.questions
        }
        for page in question_pages(attempt, layout)
    )


def chosen(page: PageChoices, data) -> dict[str, str]:
    """Return the page's choices in the posted data as question id -> answer id.

    Raises InvalidChoice for an answer its question does not have, as the page's form would
    refuse it; fields of other pages and empty ones are left out.
    """
    choices = {}
    for name, (question_id, answers) in page.items():
        value = data.get(name)
        if not value:
            continue
        if value not in answers:
            raise InvalidChoice(name)
        choices[question_id] = value
    return choices
