"""Words a learner reads, chosen for their age: focus areas, the service's description, failures.

Staff read the upstream's own names and sentences; a learner reads the portal's, and a primary
pupil short sentences with a next step they can take themselves.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal

from django.utils.html import strip_tags
from django.utils.translation import gettext_lazy

from partner_api import PartnerApiError
from partner_api.upstream import REFUSED, failure_kind, failure_message
from schools.models import PartnerSettings, School

PRIMARY = "primary"
SECONDARY = "secondary"
FURTHER_EDUCATION = "further_education"
WORDING_BY_LEVEL = {
    "LOA_PARTNER_LEVEL3": PRIMARY,
    "LOA_PARTNER_LEVEL2": SECONDARY,
    "LOA_PARTNER_LEVEL1": FURTHER_EDUCATION,
}


def wording_for(level: str | None) -> str:
    """Return which words suit a learner of this level: primary, secondary or further."""
    return WORDING_BY_LEVEL.get(level or "", SECONDARY)


# The upstream's focus areas in the portal's words: (a primary pupil's, an older learner's).
# Keyed by the name in capitals with "&" read as "and" and spaces tidied.
FOCUS_AREA_WORDS = {
    "SLEEP AND TIREDNESS": (
        gettext_lazy("Sleep and feeling tired"),
        gettext_lazy("Sleep and tiredness"),
    ),
    "RETAINING AND RECALLING INFORMATION": (
        gettext_lazy("Remembering things"),
        gettext_lazy("Remembering what you learn"),
    ),
    "EXAM ANXIETY": (
        gettext_lazy("Feeling worried about tests"),
        gettext_lazy("Feeling anxious about exams"),
    ),
    "FOCUS AND MOTIVATION": (
        gettext_lazy("Paying attention"),
        gettext_lazy("Focus and motivation"),
    ),
    "ORGANIZATION AND TIME MANAGEMENT": (
        gettext_lazy("Getting organised"),
        gettext_lazy("Getting organised and managing time"),
    ),
    "ORGANISATION AND TIME MANAGEMENT": (
        gettext_lazy("Getting organised"),
        gettext_lazy("Getting organised and managing time"),
    ),
    "STRESS AND STRAIN": (
        gettext_lazy("Feeling stressed"),
        gettext_lazy("Stress and pressure"),
    ),
    "CONFIDENCE": (
        gettext_lazy("Believing in yourself"),
        gettext_lazy("Confidence"),
    ),
}


def _focus_key(name: str) -> str:
    return " ".join(name.replace("&", " AND ").upper().split())


def focus_area_words(name: str, *, primary: bool) -> str:
    """Return a focus area as a learner reads it; an unknown one in sentence case."""
    known = FOCUS_AREA_WORDS.get(_focus_key(name))
    if known:
        return str(known[0] if primary else known[1])
    tidy = " ".join(name.replace("&", "and").split())
    return tidy[:1].upper() + tidy[1:].lower()


def description_allowed(settings: PartnerSettings, wording: str) -> bool:
    """Return whether the school lets a learner with these words read the service's description."""
    readers = settings.description_to_learners
    Readers = PartnerSettings.DescriptionReaders
    return readers == Readers.EVERYONE or (readers == Readers.OLDER and wording != PRIMARY)


def _score_spellings(score: Decimal) -> set[str]:
    """Return the ways a score is written, rounded or cut: 61.5 as 61, 62, 61.5, 61.50."""
    spellings = {format(score.normalize(), "f")}
    # Whole numbers, one and two decimals, each rounded either way at a half and cut: a
    # service may print 61.5 as "62 out of 100" or 61.55 as "61.5".
    for places in (Decimal(1), Decimal("0.1"), Decimal("0.01")):
        for rounding in (ROUND_HALF_UP, ROUND_HALF_EVEN, ROUND_FLOOR, ROUND_CEILING):
            spellings.add(f"{score.quantize(places, rounding=rounding):f}")
    return spellings


def mentions_score_or_risk(html: str, score: Decimal | None, risk_level: str) -> bool:
    """Return whether a text quotes the LOA score (rounded or cut, any usual spelling) or risk."""
    text = strip_tags(html)
    if risk_level.strip() and re.search(
        rf"(?<!\w){re.escape(risk_level.strip())}(?!\w)", text, re.IGNORECASE
    ):
        return True
    if score is None:
        return False
    numbers = set(re.findall(r"(?<![\d.,])\d+(?:[.,]\d+)?(?![\d])", text))
    return bool({n.replace(",", ".") for n in numbers} & _score_spellings(Decimal(score)))


def has_digit(html: str) -> bool:
    """Return whether a text (its words, not its tags) holds any digit."""
    return any(character.isdigit() for character in strip_tags(html))


# What a primary pupil reads when the service fails: short, and a step they can take.
PRIMARY_FAILURE = gettext_lazy(
    "That did not work just now. Try again in a few minutes. "
    "If it still does not work, tell your teacher. Your answers are saved."
)
PRIMARY_REFUSED = gettext_lazy("That did not work. Tell your teacher. Your answers are saved.")


def learner_failure_message(error: PartnerApiError, wording: str) -> str:
    """Return what a learner reads when the service fails, in words for their age."""
    if wording != PRIMARY:
        return failure_message(error)
    return str(PRIMARY_REFUSED if failure_kind(error) == REFUSED else PRIMARY_FAILURE)


def school_name(school_id: int | None) -> str:
    """Return the name of a school from the cached list of schools ("" if unknown)."""
    for school in School.everyone():
        if school.pk == school_id:
            return school.name
    return ""
