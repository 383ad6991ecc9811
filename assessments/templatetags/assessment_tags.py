"""Template filters about assessment attempts, for pages of any app that list them."""

from django import template

from assessments.models import AssessmentAttempt

register = template.Library()


@register.filter
def state_label(state: str) -> str:
    """Return the readable label of an attempt state value."""
    try:
        return AssessmentAttempt.State(state).label
    except ValueError:
        return state
