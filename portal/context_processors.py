"""Template context shared by every page."""

from django.http import HttpRequest

from accounts.access import ALL_SCHOOLS, StaffPermissions, is_staff_member, learner_for, trust_role
from assessments.child_words import school_name, wording_for
from partner_api.upstream import upstream_outage
from schools.models import School, several_schools


def roles(request: HttpRequest) -> dict:
    """Tell templates whether the visitor is staff (and what they may do) or a learner."""
    user = getattr(request, "user", None)
    if user is None:
        return {
            "is_partner_staff": False,
            "current_learner": None,
            "staff_can": None,
            **learner_words(None),
        }
    learner = learner_for(user)
    words = learner_words(learner)
    if not user.is_authenticated:
        words["learner_school_name"] = only_school_name()
    return {
        "is_partner_staff": is_staff_member(user),
        "current_learner": learner,
        "staff_can": StaffPermissions(user),
        **words,
        **schools(request),
    }


def learner_words(learner) -> dict:
    """Tell templates which words suit the learner's age, and their school's name (the header)."""
    if learner is None:
        return {"learner_wording": None, "learner_school_name": ""}
    return {
        "learner_wording": wording_for(learner.level),
        "learner_school_name": school_name(learner.school_id),
    }


def only_school_name() -> str:
    """Return the school's name while the partner has only one ("" with several)."""
    # A page no one is signed in to (the card page, a refused card, the sign-in page after an
    # idle sign-out) is a pupil's as often as not: with one school it is that school's. With
    # several it could be any of them, so it keeps "Partner portal" rather than naming one
    # school to another's pupils.
    everyone = School.everyone()
    return everyone[0].name if len(everyone) == 1 else ""


def schools(request: HttpRequest) -> dict:
    """Tell the header which school the page is about and which others the user may pick.

    Nothing while the partner has one school; a trust role may also pick "All schools".
    """
    choices = getattr(request, "school_choices", [])
    user = request.user
    if not user.is_authenticated or learner_for(user) is not None or not several_schools():
        return {"school_switcher": None}
    trust = trust_role(user) is not None
    if len(choices) < 2 and not trust:
        current = getattr(request, "working_school", None)
        return {"school_switcher": {"current": current, "choices": []}}
    return {
        "school_switcher": {
            "current": getattr(request, "working_school", None),
            "choices": choices,
            "all": trust,
            "all_value": ALL_SCHOOLS,
            "all_chosen": trust and getattr(request, "working_school_id", 0) is None,
        }
    }


def upstream(request: HttpRequest) -> dict:
    """Tell templates whether the assessment service is answering (no network call)."""
    return {"upstream_outage": upstream_outage()}
