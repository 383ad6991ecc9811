"""Template tags other apps' pages load by name: the leads' banner, acknowledgements."""

from datetime import UTC, datetime, timedelta

from django import template
from django.db import DatabaseError
from django.utils import timezone
from django.utils.translation import gettext, ngettext

from accounts.access import (
    is_safeguarding_lead,
    is_staff_member,
    safeguarding_ready,
    staff_name,
    trust_role,
    working_school,
    working_school_ids,
)
from accounts.models import StaffRole
from safeguarding.selectors import acknowledgement_times, leads_banner, unsent_alert_emails

register = template.Library()


@register.inclusion_tag("safeguarding/includes/banner.html", takes_context=True)
def safeguarding_banner(context) -> dict:
    """Tell a safeguarding lead what waits for them; tell any staff when assessments are shut."""
    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not is_staff_member(user):
        return {"shown": False}
    try:
        trust = trust_role(user) == StaffRole.TRUST_SAFEGUARDING_LEAD
        banner = (
            leads_banner(working_school_ids(user), trust=trust)
            if is_safeguarding_lead(user)
            else None
        )
        # Assessments are shut per school: the school worked in (none under "All schools").
        school = working_school(user)
        closed = school is not None and not safeguarding_ready(school)
    except DatabaseError:
        # An error page rendered while the database is down must still render.
        return {"shown": False}
    return {
        "shown": closed or (banner is not None and banner.shown),
        "banner": banner,
        "closed": closed,
        "staff_can": context.get("staff_can"),
    }


@register.filter
def acknowledged_by_name(alert) -> str:
    """Name who acknowledged the alert as other pages do; the kept username once they are gone."""
    user = alert.acknowledged_by
    return staff_name(user) if user is not None else alert.acknowledged_by_username


@register.inclusion_tag("safeguarding/includes/email_problems.html", takes_context=True)
def alert_email_problems(context) -> dict:
    """Show the operations page which alert emails of the school are not sent (no names)."""
    return {"problems": unsent_alert_emails(working_school_ids(context["request"].user))}


@register.inclusion_tag("safeguarding/includes/acknowledgement_times.html", takes_context=True)
def acknowledgement_times_of(context, start: datetime | None, end: datetime | None) -> dict:
    """Show how long the alerts raised in [start, end) took to be acknowledged (the school's)."""
    now = timezone.now()
    since = start or datetime.min.replace(tzinfo=UTC)
    until = end or now + timedelta(seconds=1)
    user = context["request"].user
    times = acknowledgement_times(
        since=since, until=until, now=now, school_ids=working_school_ids(user)
    )
    return {"times": times}


@register.filter
def duration_words(value: timedelta | None) -> str:
    """Say a duration in the largest sensible units: "4 min", "2 h 5 min", "3 days 2 h"."""
    if value is None:
        return "–"
    minutes = int(value.total_seconds() // 60)
    if minutes < 1:
        return gettext("under 1 min")
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    if days:
        return ngettext("%(days)d day %(hours)d h", "%(days)d days %(hours)d h", days) % {
            "days": days,
            "hours": hours,
        }
    if hours:
        return gettext("%(hours)d h %(minutes)d min") % {"hours": hours, "minutes": minutes}
    return gettext("%(minutes)d min") % {"minutes": minutes}
