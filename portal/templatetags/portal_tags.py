"""Template helpers for upstream values that need care."""

from django import template
from django.templatetags.static import static
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode

from portal.icons import icon_symbol, icon_url
from portal.middleware import learner_seconds_left

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


@register.simple_tag(takes_context=True)
def session_timeout_script(context: template.Context) -> str:
    """Load the learner's session-timeout warning with the server's idea of the time left."""
    request = context["request"]
    # The settings ride on a <meta>: the page's only scripts are bare static-file tags.
    return format_html(
        '<meta name="learner-session" data-seconds-left="{}" data-keep-alive-url="{}" '
        'data-sign-in-url="{}">\n<script src="{}" defer></script>',
        learner_seconds_left(request),
        reverse("assessments:keep_alive"),
        f"{reverse('login')}?{urlencode({'next': request.path})}",
        static("js/session_timeout.js"),
    )


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
