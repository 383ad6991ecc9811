"""Deterministic scoring of a submitted assessment into the spec's results fields."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from html import escape
from typing import Any

from sandbox.bank import FOCUS_AREAS, LEVELS, PRIMARY, questions_for_level
from sandbox.primary import PRIMARY_AREA_WORDS, PRIMARY_BALANCED_TRAIT, PRIMARY_TRAITS
from sandbox.traits import BALANCED_TRAIT, TRAITS, Trait

# An area needs help when it scores under half of its possible points.
NEEDS_HELP_BELOW = 0.5

# RiskLevel labels by LOAScore (higher score = fewer signs of need), highest band first.
RISK_BANDS: tuple[tuple[float, str], ...] = ((70.0, "LOW"), (45.0, "MODERATE"), (0.0, "HIGH"))
RISK_LEVELS: tuple[str, ...] = tuple(label for _, label in RISK_BANDS)


@dataclass(frozen=True)
class AreaScore:
    """A focus area's points out of its maximum, from its questions."""

    name: str
    points: int
    maximum: int
    questions_count: int

    @property
    def ratio(self) -> float:
        """Return the share of possible points scored (1.0 = no sign of need)."""
        return self.points / self.maximum if self.maximum else 1.0

    @property
    def needs_help(self) -> bool:
        """Return whether the area scored under the help threshold."""
        return self.ratio < NEEDS_HELP_BELOW


def area_scores(chosen: Mapping[str, str], level: str) -> list[AreaScore]:
    """Score each focus area from a complete map of question id to answer id at a level."""
    totals = {area: [0, 0, 0] for area in FOCUS_AREAS}
    for question in questions_for_level(level):
        answer = next(answer for answer in question.answers if answer.id == chosen[question.id])
        points, maximum, count = totals[question.focus_area]
        totals[question.focus_area] = [
            points + answer.score,
            maximum + question.top_score,
            count + 1,
        ]
    return [AreaScore(area, *totals[area]) for area in FOCUS_AREAS]


def traits_for_level(level: str) -> tuple[dict[str, Trait], Trait]:
    """Return the traits by area and the balanced trait, in words for the level's age."""
    if LEVELS[level].target_group == PRIMARY:
        return PRIMARY_TRAITS, PRIMARY_BALANCED_TRAIT
    return TRAITS, BALANCED_TRAIT


def risk_level(loa_score: float) -> str:
    """Return the RiskLevel label for an LOAScore."""
    return next(label for floor, label in RISK_BANDS if loa_score >= floor)


def score_submission(chosen: Mapping[str, str], level: str) -> dict[str, Any]:
    """Return the results body (spec field names) for a validated, complete submission."""
    areas = area_scores(chosen, level)
    points = sum(area.points for area in areas)
    maximum = sum(area.maximum for area in areas)
    loa_score = round(100 * points / maximum, 2)
    risk = risk_level(loa_score)
    needing_help = [area for area in areas if area.needs_help]
    # The trait follows the weakest area; ties go to the earlier area in the spec's order.
    weakest = min(needing_help, key=lambda area: area.ratio, default=None)
    traits, balanced = traits_for_level(level)
    trait = traits[weakest.name] if weakest else balanced
    return {
        "LOAScore": loa_score,
        "RiskLevel": risk,
        "TraitSigns": _html_list("ul", trait.signs),
        "TraitTitle": trait.title,
        "TraitTips": _tips_html(trait),
        "TraitCopy": trait.copy,
        "ResultDescription": description_html(
            loa_score, risk, [area.name for area in needing_help], level
        ),
        "focus_areas": [
            {
                "search_filter_name": area.name,
                "needs_help": "yes" if area.needs_help else "no",
                "questions_count": area.questions_count,
            }
            for area in areas
        ],
    }


def _html_list(tag: str, items: tuple[str, ...]) -> str:
    """Return an HTML list of escaped items."""
    rows = "".join(f"<li>{escape(item)}</li>" for item in items)
    return f"<{tag}>{rows}</{tag}>"


def _tips_html(trait: Trait) -> str:
    """Return the tips as an introductory paragraph, an ordered list and an optional link."""
    html = f"<p>{escape(trait.tips_intro)}</p>{_html_list('ol', trait.tips)}"
    if trait.link:
        url, text = trait.link
        html += f'<p>More ideas: <a href="{escape(url)}">{escape(text)}</a></p>'
    return html


def description_html(loa_score: float, risk: str, needing_help: list[str], level: str) -> str:
    """Return the HTML paragraph that sums up the score and the areas needing help."""
    if LEVELS[level].target_group == PRIMARY:
        return _primary_description_html(needing_help)
    summary = (
        f"<p>The overall score is <strong>{loa_score:g}</strong> out of 100, "
        f"a <em>{escape(risk.lower())}</em> level of need."
    )
    if not needing_help:
        return f"{summary} No focus area stands out as needing help right now.</p>"
    return f"{summary} Support would help most with {_listed(needing_help)}.</p>"


def _primary_description_html(needing_help: list[str]) -> str:
    """Return the summary in a young child's words: short sentences, areas named simply.

    No score: "0 out of 100" reads to a child as failing a test. LOAScore stays in the body
    for the grown-ups.
    """
    thanks = "<p>Thank you for answering the questions."
    if not needing_help:
        return f"{thanks}</p>"
    words = [PRIMARY_AREA_WORDS[area] for area in needing_help]
    return f"{thanks} A grown-up can help you with {_listed(words)}.</p>"


def _listed(names: list[str]) -> str:
    """Return names in bold, joined as a sentence lists them ("a, b and c")."""
    bold = [f"<strong>{escape(name)}</strong>" for name in names]
    return bold[0] if len(bold) == 1 else f"{', '.join(bold[:-1])} and {bold[-1]}"
