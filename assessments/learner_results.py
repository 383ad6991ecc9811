"""What a learner's results page says: their results in words for their age, and who can help.

The partner decides what learners see of their own results (`PartnerSettings`): the upstream's
words without the LOA score and risk level (the default), everything, or no results at all,
only that their answers arrived and a member of staff will look at them. Whatever it decides,
the page says who to talk to at school and which helplines answer when school is closed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from django.template.loader import render_to_string
from django.utils.safestring import SafeString
from django.utils.translation import get_language

from assessments import results_markup
from assessments.child_words import (  # noqa: F401 (WORDING_BY_LEVEL: also read from here)
    FURTHER_EDUCATION,
    PRIMARY,
    WORDING_BY_LEVEL,
    description_allowed,
    wording_for,
)
from assessments.taking import ResultsSnapshot
from kit.row_cache import cached_rows, forget_row
from schools.models import PartnerSettings, settings_key

if TYPE_CHECKING:  # annotations only: the learners app sits above this one
    from learners.models import Learner

SUPPORT_TEMPLATE = "assessments/includes/support.html"

# Shown should a partner's list ever be empty: the page always names somewhere to turn.
DEFAULT_HELPLINES = PartnerSettings._meta.get_field("helplines").default


@dataclass(frozen=True)
class ResultsPage:
    """What the learner's results page shows besides the attempt's own state."""

    wording: str
    # Rendered results (None while there are none, or when the partner hides them).
    result_html: SafeString | None
    # Whether the partner lets learners read their results at all.
    results_shown: bool
    # The results have arrived but the partner hides them: the page says only that the
    # answers arrived and a member of staff will look at them.
    results_hidden: bool
    # Who to talk to at school, as staff wrote it; empty: the page's own kind default.
    contacts: tuple[str, ...]
    # Helplines for when school is closed, one per line as the partner wrote them.
    helplines: tuple[str, ...]

    @property
    def support_html(self) -> SafeString:
        """Return the "who to talk to" section: the same for every learner with these words."""
        return _support_html(self.wording, self.contacts, self.helplines, get_language())

    @property
    def primary(self) -> bool:
        return self.wording == PRIMARY

    @property
    def further_education(self) -> bool:
        return self.wording == FURTHER_EDUCATION


def results_page(*, learner: Learner, attempt: ResultsSnapshot) -> ResultsPage:
    """Return the learner's results page as the partner wants it read, at their age."""
    # The partner's settings and the learner's group contacts, in one cache round trip.
    contacts_key = _contacts_key(learner.pk)
    school_key = settings_key(learner.school_id)
    rows = cached_rows(
        {
            school_key: lambda: PartnerSettings.load(learner.school_id),
            contacts_key: lambda: _group_contacts(learner),
        }
    )
    settings = rows[school_key]
    wording = wording_for(learner.level)
    has_results = attempt.result_pk is not None
    shown = not settings.hide_results_from_learners
    return ResultsPage(
        wording=wording,
        result_html=(
            results_markup.results_markup(
                attempt,
                primary=wording == PRIMARY,
                show_scores=settings.show_scores_to_learners,
                description=description_allowed(settings, wording),
            )
            if has_results and shown
            else None
        ),
        results_shown=shown,
        results_hidden=has_results and not shown,
        contacts=rows[contacts_key] or _distinct([settings.school_contact]),
        helplines=helplines(settings),
    )


def _group_contacts(learner: Learner) -> tuple[str, ...]:
    """Return the contacts of the learner's current groups, each once."""
    # Kept in the shared cache until their groups change (the learners app drops them:
    # forget_group_contacts). Read through the learner's own relation, by name: the learners
    # app sits above this one.
    return _distinct(
        learner.group_memberships.filter(left_at__isnull=True, group__archived_at__isnull=True)
        .exclude(group__contact="")
        .order_by("group__name", "group_id")
        .values_list("group__contact", flat=True)
    )


@lru_cache(maxsize=256)
def _support_html(
    wording: str, contacts: tuple[str, ...], helplines: tuple[str, ...], language: str | None
) -> SafeString:
    # Rendered once per process for each set of words (a handful per school): on every results
    # page its template cost a tenth of the page's time. The arguments are all it depends on.
    page = {"primary": wording == PRIMARY, "contacts": contacts, "helplines": helplines}
    return render_to_string(SUPPORT_TEMPLATE, {"page": page})


def _contacts_key(learner_id: int) -> str:
    return f"assessments.contacts:{learner_id}"


def forget_group_contacts(learner_ids: Iterable[int]) -> None:
    """Drop the cached school contacts of these learners (their groups or a group changed)."""
    for learner_id in learner_ids:
        forget_row(_contacts_key(learner_id))


def helplines(settings: PartnerSettings) -> tuple[str, ...]:
    """Return the partner's helplines, one per line (the defaults should the list be empty)."""
    return _distinct(settings.helplines.splitlines()) or _distinct(DEFAULT_HELPLINES.splitlines())


def _distinct(texts: Iterable[str]) -> tuple[str, ...]:
    """Return the texts with their spaces tidied, once each, in order, without empty ones."""
    seen: dict[str, None] = {}
    for text in texts:
        tidy = " ".join(text.split())
        if tidy:
            seen.setdefault(tidy)
    return tuple(seen)


def school_contacts(learner: Learner, settings: PartnerSettings) -> tuple[str, ...]:
    """Return whom a learner can ask for: their groups' contacts, then the school's, each once."""
    return _distinct([*_group_contacts(learner), settings.school_contact])
