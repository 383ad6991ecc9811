"""Template tags that show follow-ups on other apps' pages."""

from django import template

from followups.selectors import learner_open_followups

register = template.Library()


@register.inclusion_tag("followups/includes/learner_followups.html")
def learner_followups(learner) -> dict:
    """Show a learner's open follow-ups, each linked to its item."""
    return {"follow_ups": learner_open_followups(learner)}
