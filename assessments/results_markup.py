"""A result's section of the learner's results page, rendered once per result and way of showing it.

Results never change; how they are shown does. The markup is cached in the shared cache and,
for the results lately shown, in this process (as the question pages are, page_markup.py).
"""

import threading
from hashlib import blake2b

from django.core.cache import cache
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from assessments.child_words import focus_area_words, has_digit, mentions_score_or_risk
from assessments.models import AssessmentResult
from assessments.taking import ResultsSnapshot

# Part of every cache key: bump it when the results template or what it is given changes, so a
# shared cache never serves markup of the previous release.
RESULTS_MARKUP_VERSION = 7
CACHE_TIMEOUT = 24 * 60 * 60  # a section is rebuilt in a few ms; a day keeps the cache lean

# Results' sections lately shown, also kept in this process: the shared cache hands back a
# copy on every view. Keys change with the result, so an entry is never stale; past the limit
# the oldest goes.
RECENT_RESULTS: dict[str, str] = {}
RECENT_RESULTS_LIMIT = 256
_recent_results_lock = threading.Lock()

RESULTS_TEMPLATE = "assessments/includes/results.html"  # the learner's; staff read includes/


def results_markup(
    snapshot: ResultsSnapshot, *, primary: bool, show_scores: bool, description: bool
) -> SafeString:
    """Return a result's section for its learner, rendered once per result and way of showing it."""
    # Results never change; how they are shown does: in a primary pupil's words or an older
    # learner's, with or without the LOA score and risk level (the partner's choice), with or
    # without the service's own description (the school's choice for the learner's age).
    digest = blake2b(snapshot.result_version.encode(), digest_size=12).hexdigest()
    shown = (
        f"{'primary' if primary else 'older'}:{'scores' if show_scores else 'words'}:"
        f"{'description' if description else 'own'}"
    )
    key = (
        f"assessments:results:{RESULTS_MARKUP_VERSION}:{get_language()}:{shown}:"
        f"{snapshot.result_pk}:{digest}"
    )
    html = RECENT_RESULTS.get(key)
    if html is not None:
        return mark_safe(html)  # noqa: S308 (as below)
    html = cache.get(key)
    if html is None:
        result = AssessmentResult.objects.get(pk=snapshot.result_pk)
        context = _results_context(result, primary, show_scores, description)
        html = str(render_to_string(RESULTS_TEMPLATE, context))
        cache.set(key, html, CACHE_TIMEOUT)
    with _recent_results_lock:
        while len(RECENT_RESULTS) >= RECENT_RESULTS_LIMIT:
            del RECENT_RESULTS[next(iter(RECENT_RESULTS))]
        RECENT_RESULTS[key] = html
    # Rendered by an autoescaped template from the stored (sanitized) fields.
    return mark_safe(html)  # noqa: S308


def _results_context(
    result: AssessmentResult, primary: bool, show_scores: bool, description: bool
) -> dict:
    """Return what the learner's results template shows: the portal's words for their age."""
    # The service's words may quote the score or the risk label: while the school keeps those
    # from learners, each part that does is left out (a result never changes, so neither does
    # this answer, and the cache key need not hold it).
    trait = {
        "title": result.trait_title,
        "copy": result.trait_copy,
        "signs_html": result.trait_signs_html,
        "tips_html": result.trait_tips_html,
    }
    html = result.result_description_html
    if not show_scores:
        # The trait's parts are its shared copy, written for every learner of the trait: a
        # number there is usually advice ("nine hours' sleep"), so only the score's own
        # spellings (rounded or cut) and the risk label take a part away.
        trait = {
            part: "" if mentions_score_or_risk(text, result.loa_score, result.risk_level) else text
            for part, text in trait.items()
        }
        # The description is written about this learner's result: a number in it is most
        # likely the score in some form no list of spellings catches ("6 out of 10", "top
        # 40%"), so any digit withholds it; the portal's own words still explain the result.
        if has_digit(html) or mentions_score_or_risk(html, None, result.risk_level):
            description = False
    return {
        "result": result,
        "trait": trait,
        "primary": primary,
        "show_scores": show_scores,
        "description_html": html if description else "",
        "help_areas": [
            focus_area_words(area.name, primary=primary) for area in result.areas_needing_help
        ],
    }
