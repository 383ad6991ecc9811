"""Template helpers for upstream values that need care."""

from django import template
from django.utils.html import format_html

from portal.icons import icon_symbol, icon_url

register = template.Library()


@register.simple_tag
def answer_icon(icon: str | None) -> str:
    """Render an answer's icon if it is a known name or an https URL; otherwise nothing."""
    if not icon:
        return ""
    symbol = icon_symbol(icon)
    if symbol:
        return format_html('<span class="answer-icon" aria-hidden="true">{}</span>', symbol)
    url = icon_url(icon)
    if url:
        return format_html(
            '<img class="answer-icon" src="{}" alt="" width="24" height="24" '
            'referrerpolicy="no-referrer">',
            url,
        )
    return ""


@register.filter
def state_label(state: str) -> str:
    """Return the readable label of an attempt state value."""
    from assessments.models import AssessmentAttempt

    try:
        return AssessmentAttempt.State(state).label
    except ValueError:
        return state


@register.filter
def plain_number(value) -> str:
    """Show a Decimal as the upstream wrote it, without trailing zeros or exponent."""
    if value is None:
        return ""
    text = format(value.normalize(), "f")
    return text
