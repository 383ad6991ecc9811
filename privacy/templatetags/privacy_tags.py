"""Template tags that show a learner's safeguarding hold on other apps' pages."""

from django import template
from django.utils import timezone

from accounts.access import sees_results
from privacy.hold_words import automatic_hold_sentence, under_placed_hold_sentence
from privacy.selectors import hold_of, kept_until
from schools.models import PartnerSettings

register = template.Library()


@register.inclusion_tag("privacy/includes/records_hold.html", takes_context=True)
def records_hold_status(context, learner) -> dict:
    """Say whether a learner's records are held past the retention period, until when, why.

    Why (an alert, a follow-up, the reason staff gave) only to staff who read results: a
    partner admin who does not must not learn from it that a child worried someone.
    """
    hold = hold_of(learner, today=timezone.localdate())
    request = context.get("request")
    show_why = request is not None and sees_results(request.user)
    years = PartnerSettings.of(learner.school_id).retention_years
    automatic = ""
    if hold.automatic and hold.placed is None:
        automatic = automatic_hold_sentence(hold, show_why=show_why, years=years)
    return {
        "show_why": show_why,
        "learner": learner,
        "hold": hold,
        "automatic": automatic,
        "under_placed": under_placed_hold_sentence(hold) if hold.placed and show_why else "",
        "kept_until": None if hold.held else kept_until(learner),
        "years": years,
    }
