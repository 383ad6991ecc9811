"""Template tags that show a learner's safeguarding hold on other apps' pages."""

from django import template
from django.utils import timezone

from portal.models import PartnerSettings
from privacy.selectors import hold_of, kept_until

register = template.Library()


@register.inclusion_tag("privacy/includes/records_hold.html")
def records_hold_status(learner) -> dict:
    """Say whether a learner's records are held past the retention period, until when, why."""
    hold = hold_of(learner, today=timezone.localdate())
    return {
        "learner": learner,
        "hold": hold,
        "kept_until": None if hold.held else kept_until(learner),
        "years": PartnerSettings.current().retention_years,
    }
