"""Whether a stored result needs a safeguarding lead now: the partner's lists of values.

The spec lists neither the needs_help values nor the RiskLevel labels (docs/partner-api.md).
The partner lists which are routine and which are priority (PartnerSettings); a value in
neither list is treated as a priority too ("unrecognised value: review"), so that a new label
or a different dash never passes silently.
"""

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date

from django.utils import timezone

from schools.models import PartnerSettings

NEEDS_HELP = "needs_help"
RISK_LEVEL = "risk_level"

# From this age a learner is an adult: the partner decides whether their results alert.
ADULT_AGE = 18

PRIORITY = "priority"
UNRECOGNISED = "unrecognised"

_IGNORED = re.compile(r"[\s\-\u2010-\u2015\u2212\u2043\ufe58\ufe63\uff0d_]+")


def value_key(value: str) -> str:
    """Return a value's matching key: case, spaces and every kind of dash ignored."""
    text = unicodedata.normalize("NFKC", value).casefold()
    return "".join(
        character for character in _IGNORED.sub("", text) if unicodedata.category(character) != "Pd"
    )


def listed_keys(text: str) -> frozenset[str]:
    """Return the matching keys of a settings list (one value per line)."""
    return frozenset(key for key in (value_key(line) for line in text.splitlines()) if key)


@dataclass(frozen=True)
class ConcernValue:
    """One value of a result that calls for an alert, and why."""

    field: str  # NEEDS_HELP or RISK_LEVEL
    value: str
    reason: str  # PRIORITY or UNRECOGNISED


@dataclass(frozen=True)
class Concern:
    """What of a result calls for an alert; empty when everything is routine."""

    values: list[ConcernValue] = field(default_factory=list)

    @property
    def raises_alert(self) -> bool:
        return bool(self.values)

    @property
    def reason(self) -> str:
        """Return PRIORITY if any listed priority value is there, else UNRECOGNISED."""
        reasons = {value.reason for value in self.values}
        return PRIORITY if PRIORITY in reasons else UNRECOGNISED


def classify(value: str, *, routine: frozenset[str], priority: frozenset[str]) -> str | None:
    """Return PRIORITY or UNRECOGNISED for a value that calls for an alert, None if routine."""
    key = value_key(value)
    if key in priority:
        return PRIORITY
    if key in routine:
        return None
    return UNRECOGNISED


def result_concern(
    *, risk_level: str, needs_help_values: list[str], partner: PartnerSettings | None = None
) -> Concern:
    """Return which of a result's values call for an alert under the partner's lists."""
    partner = partner or PartnerSettings.current()
    found: list[ConcernValue] = []
    risk = classify(
        risk_level,
        routine=listed_keys(partner.risk_levels_routine),
        priority=listed_keys(partner.risk_levels_priority),
    )
    if risk:
        found.append(ConcernValue(RISK_LEVEL, risk_level, risk))
    routine = listed_keys(partner.needs_help_routine)
    priority = listed_keys(partner.needs_help_priority)
    for value in dict.fromkeys(needs_help_values):
        reason = classify(value, routine=routine, priority=priority)
        if reason:
            found.append(ConcernValue(NEEDS_HELP, value, reason))
    return Concern(found)


def age_on(dob: date | None, day: date) -> int | None:
    """Return a person's age in whole years on a day (None without a date of birth)."""
    if dob is None:
        return None
    return day.year - dob.year - ((day.month, day.day) < (dob.month, dob.day))


def concern_of_result(result, *, partner: PartnerSettings | None = None) -> Concern:
    """Return what of a stored result calls for an alert, the partner's rule on adults applied."""
    learner = result.attempt.learner
    partner = partner or PartnerSettings.of(learner.school_id)
    age = age_on(learner.dob, timezone.localdate())
    if partner.adults_without_alerts and age is not None and age >= ADULT_AGE:
        return Concern()
    return result_concern(
        risk_level=result.risk_level,
        needs_help_values=[area.needs_help for area in result.focus_areas.all()],
        partner=partner,
    )
