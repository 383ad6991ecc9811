"""Template context shared by every page."""

from django.http import HttpRequest

from accounts.access import StaffPermissions, is_staff_member, learner_for
from partner_api.upstream import upstream_outage


def roles(request: HttpRequest) -> dict:
    """Tell templates whether the visitor is staff (and what they may do) or a learner."""
    user = getattr(request, "user", None)
    if user is None:
        return {"is_partner_staff": False, "current_learner": None, "staff_can": None}
    return {
        "is_partner_staff": is_staff_member(user),
        "current_learner": learner_for(user),
        "staff_can": StaffPermissions(user),
    }


def upstream(request: HttpRequest) -> dict:
    """Tell templates whether the assessment service is answering (no network call)."""
    return {"upstream_outage": upstream_outage()}
