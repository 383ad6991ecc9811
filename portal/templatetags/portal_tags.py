"""Template helpers for upstream values that need care."""

import json
import re
from functools import lru_cache
from typing import NamedTuple

from django import template
from django.templatetags.static import static
from django.urls import get_script_prefix, reverse
from django.utils.formats import number_format
from django.utils.html import escape, format_html, format_html_join
from django.utils.http import urlencode
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language, gettext, ngettext

from accounts.access import staff_name as staff_name_of
from accounts.idle import learner_seconds_left
from kit.icons import icon_symbol
from kit.numbers import number_text
from partner_api.upstream import FAILURE_MESSAGE_TAG, Outage, call_outcome_label

register = template.Library()

# The session-timeout dialog opens this long before the server signs the learner out.
SESSION_WARNING_SECONDS = 120


@register.simple_tag
def answer_icon(icon: str | None, picture: str = "") -> str:
    """Render an answer's picture kept by the portal, else a known name's symbol, else nothing.

    An icon given by address is never shown from there: the learner's browser would fetch it
    from a host the portal does not control, telling it who is taking an assessment and when.
    Only the copy the portal fetched and serves itself (`picture`, its own address) is shown.
    Icons are decoration (the answer's text says everything): screen readers skip them.
    """
    if picture:
        return format_html('<img src="{}" alt="" class="answer-picture">', picture)
    symbol = icon_symbol(icon) if icon else None
    if symbol:
        return format_html('<span class="answer-icon" aria-hidden="true">{}</span>', symbol)
    return ""


@register.simple_tag(takes_context=True)
def session_timeout_script(context: template.Context) -> str:
    """Load the learner's session-timeout warning with the server's idea of the time left."""
    request = context["request"]
    # The settings and the dialog's words ride on a <meta>: the page's only scripts are bare
    # static-file tags. The script picks the sentence for the time left (whole minutes while
    # more than 90 seconds are left; the dialog opens SESSION_WARNING_SECONDS before the end).
    words = _session_timeout_words(get_language(), context.get("learner_wording") == "primary")
    return format_html(
        '<meta name="learner-session" data-seconds-left="{}" data-keep-alive-url="{}" '
        'data-sign-in-url="{}" data-warn-before="{}" data-title="{}" data-stay="{}" '
        'data-failed="{}" data-warning-minutes="{}" data-warning-about-a-minute="{}" '
        'data-warning-under-a-minute="{}">\n<script src="{}" defer></script>',
        learner_seconds_left(request),
        words.keep_alive_url,
        f"{words.sign_in_url}?{urlencode({'next': request.path})}",
        SESSION_WARNING_SECONDS,
        words.title,
        words.stay,
        words.failed,
        words.in_minutes,
        words.about_a_minute,
        words.under_a_minute,
        words.script,
    )


class _SessionTimeoutWords(NamedTuple):
    keep_alive_url: str
    sign_in_url: str
    title: str
    stay: str
    failed: str
    in_minutes: str
    about_a_minute: str
    under_a_minute: str
    script: str


@lru_cache(maxsize=16)
def _session_timeout_words(language: str | None, primary: bool = False) -> _SessionTimeoutWords:
    """Return what the warning says in a language, and its addresses: the same on every page.

    Worked out once per language (and for primary pupils or older learners) and process: on
    every learner page these translations and reversed URLs cost more than the rest of the tag.
    """
    if primary:
        return _primary_session_timeout_words(_session_timeout_words(language))
    minutes = range(2, SESSION_WARNING_SECONDS // 60 + 1)
    in_minutes = {
        str(count): ngettext(
            "For your security, you will be signed out in %(count)s minute because nothing "
            "has happened on this page. Your saved answers are kept.",
            "For your security, you will be signed out in %(count)s minutes because nothing "
            "has happened on this page. Your saved answers are kept.",
            count,
        )
        % {"count": count}
        for count in minutes
    }
    return _SessionTimeoutWords(
        keep_alive_url=reverse("assessments:keep_alive"),
        sign_in_url=reverse("login"),
        title=gettext("You will be signed out soon"),
        stay=gettext("Stay signed in"),
        failed=gettext("That did not work. Check your connection and try again."),
        in_minutes=json.dumps(in_minutes, ensure_ascii=False),
        about_a_minute=gettext(
            "For your security, you will be signed out in about a minute because nothing "
            "has happened on this page. Your saved answers are kept."
        ),
        under_a_minute=gettext(
            "For your security, you will be signed out in less than a minute because nothing "
            "has happened on this page. Your saved answers are kept."
        ),
        script=static("js/session_timeout.js"),
    )


def _primary_session_timeout_words(older: _SessionTimeoutWords) -> _SessionTimeoutWords:
    """Return the warning in a primary pupil's words: short sentences, the same addresses."""
    minutes = range(2, SESSION_WARNING_SECONDS // 60 + 1)
    in_minutes = {
        str(count): ngettext(
            "Nothing has happened for a while. You will be signed out in %(count)s minute. "
            "Your answers are saved.",
            "Nothing has happened for a while. You will be signed out in %(count)s minutes. "
            "Your answers are saved.",
            count,
        )
        % {"count": count}
        for count in minutes
    }
    return older._replace(
        title=gettext("You will be signed out soon"),
        stay=gettext("I am still here"),
        failed=gettext("That did not work. Try again, or tell your teacher."),
        in_minutes=json.dumps(in_minutes, ensure_ascii=False),
        about_a_minute=gettext(
            "Nothing has happened for a while. You will be signed out in about a minute. "
            "Your answers are saved."
        ),
        under_a_minute=gettext(
            "Nothing has happened for a while. You will be signed out very soon. "
            "Your answers are saved."
        ),
    )


@register.simple_tag
def learner_nav() -> SafeString:
    """Render the learner's header links, the same on every page they see."""
    return _learner_nav(get_language(), get_script_prefix())


@lru_cache(maxsize=16)
def _learner_nav(language: str | None, script_prefix: str) -> SafeString:
    # Made once per language and process: reversing and translating these on every learner
    # page cost as much as the rest of the header.
    links = (
        ("assessments:my_assessments", gettext("My assessments")),
        ("safeguarding:talk", gettext("I want to talk to someone")),
        ("privacy:my_privacy", gettext("My information")),
    )
    return format_html_join(
        "\n", '<li><a href="{}">{}</a></li>', ((reverse(name), label) for name, label in links)
    )


@register.filter
def staff_name(user) -> str:
    """Name a member of staff: full name, else username (accounts.access.staff_name).

    Empty for no account (one deleted since), so that `|default:` can say who it was.
    """
    return staff_name_of(user) if user is not None else ""


@register.filter
def call_outcome(outcome: str) -> str:
    """Name a failed upstream call's recorded outcome in the reader's language."""
    return call_outcome_label(outcome)


@register.simple_tag(takes_context=True)
def upstream_banner(context: template.Context) -> Outage | None:
    """Return the outage the page's banner tells of: None for no banner.

    Signed-in people see it on every page but the failure page, which says it already.
    """
    user = context.get("user")
    if not (user and user.is_authenticated) or context.get("failure_page"):
        return None
    return context.get("upstream_outage")


@register.filter
def shown_beside_banner(messages, banner: Outage | None) -> list:
    """Return the messages to show: one saying the service failed goes while the banner says it."""
    return [
        message
        for message in messages
        if not (banner and FAILURE_MESSAGE_TAG in (message.extra_tags or "").split())
    ]


# A phone number in a line of text: three digits or more, single spaces between groups, perhaps
# after a + ("0800 1111", "116 123", "999", "+44 20 7946 0000"). Hyphens are not read as part of
# one: "16-25 year olds" is not a number to dial.
PHONE_NUMBER = re.compile(r"(?<![\w+])\+?\d(?: ?\d){2,}(?!\w)")
# The last of these words before a number says how to reach it: "text SHOUT to 85258".
HOW_TO_REACH = re.compile(r"\b(call|phone|ring|dial|tel|text|sms)\b", re.IGNORECASE)


@register.filter
def phone_links(line: str) -> SafeString:
    """Make each phone number in a line a link that calls it (or texts it, after "text")."""
    parts: list[str] = []
    start = 0
    for match in PHONE_NUMBER.finditer(line):
        said = HOW_TO_REACH.findall(line, 0, match.start())
        scheme = "sms" if said and said[-1].lower() in ("text", "sms") else "tel"
        number = match.group()
        parts += [
            escape(line[start : match.start()]),
            format_html('<a href="{}:{}">{}</a>', scheme, number.replace(" ", ""), number),
        ]
        start = match.end()
    parts.append(escape(line[start:]))
    # Each part is escaped text or format_html's markup.
    return mark_safe("".join(parts))  # noqa: S308


@register.filter
def number(value) -> str:
    """Show a figure (a score, a count) the portal's one way: 1,234.5, 45.45, 50."""
    return number_text(value)


@register.filter
def plain_number(value) -> str:
    """Show an identifier such as an assessment's version exactly as the upstream wrote it.

    Not for figures (`number` rounds those): a version 1.125 is not version 1.13. No
    trailing zeros or exponent; the decimal separator is the active locale's.
    """
    if value is None:
        return ""
    return number_format(value.normalize())
