"""`{% lesson_panel group %}`: the class page's sign-in window and live roster.

The class page belongs to the learners app, which sits below this one: it loads this tag by
name, as templates link other apps' pages by URL name, and never imports the lessons app.
"""

from django import template

from lessons.access import learner_lesson_group, runs_lessons
from lessons.forms import WindowOpenForm
from lessons.qr import address_to_type, card_address
from lessons.selectors import minutes_to_offer, roster_context
from lessons.services import window_current
from schools.models import PartnerSettings

register = template.Library()


@register.inclusion_tag("lessons/panel.html", takes_context=True)
def lesson_panel(context, group) -> dict:
    """Render the lesson panel for staff who run the group's lessons; nothing for others."""
    request = context["request"]
    if not runs_lessons(request.user, group):
        return {"shown": False}
    window = window_current(group)
    max_minutes = PartnerSettings.of(group.school_id).card_window_max_minutes
    return {
        "shown": True,
        "group": group,
        **roster_context(window),
        "card_address": address_to_type(card_address()),
        # The minutes chosen for this lesson (or the last one), not a fixed hour.
        "open_form": WindowOpenForm(
            initial={"minutes": minutes_to_offer(group, window, max_minutes)},
            max_minutes=max_minutes,
        ),
        "csrf_token": context.get("csrf_token"),
    }


@register.simple_tag(takes_context=True)
def prints_card_of(context, learner) -> bool:
    """Return whether the member of staff runs the lessons of one of the learner's groups."""
    return learner_lesson_group(context["request"].user, learner) is not None
