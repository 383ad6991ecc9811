"""Template filters about assessment attempts, for pages of any app that list them."""

from django import template

from assessments.models import AssessmentAttempt
from assessments.upstream_terms import upstream_term

register = template.Library()


@register.filter
def state_label(state: str) -> str:
    """Return the readable label of an attempt state value."""
    try:
        return AssessmentAttempt.State(state).label
    except ValueError:
        return state


@register.filter
def staff_term(value: str) -> str:
    """Return the staff word for an upstream code (assessments.upstream_terms)."""
    return upstream_term(value)
