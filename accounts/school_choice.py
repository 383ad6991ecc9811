"""The school a member of staff works in: chosen on any page, kept in the session.

A member of staff in several schools (or a trust role) picks one; a trust role may pick
"All schools" where a page supports it. The middleware tells every layer below which school
this request works in (schools.context), so a school's settings and new rows follow it; a
learner always works in their own school.
"""

import re

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from accounts.access import (
    ALL_SCHOOLS,
    learner_account,
    schools_of,
    staff_role,
    trust_role,
)
from schools.context import reset_working_school, set_working_school
from schools.models import several_schools

SESSION_KEY = "working_school"


def choose_for(request: HttpRequest) -> None:
    """Settle the request's school from the session's choice and the user's schools."""
    user = request.user
    # A role or settings worked out before the school was known are of another school.
    wrapped = getattr(user, "_wrapped", user)  # the lazy request.user is loaded by now
    for memo in ("_staff_role", "_partner_settings", "_all_schools_results"):
        wrapped.__dict__.pop(memo, None)
    request.working_school = None
    request.school_choices = []
    learner = learner_account(user)
    if learner is not None:
        request.working_school_id = learner.school_id
        return
    mine = schools_of(user)
    ids = {school.pk for school in mine}
    chosen = request.session.get(SESSION_KEY)
    if chosen == ALL_SCHOOLS and trust_role(user) is not None and several_schools():
        user._working_school = ALL_SCHOOLS
        request.working_school_id = None
    else:
        if chosen not in ids:
            chosen = mine[0].pk if mine else None
        user._working_school = chosen
        request.working_school_id = chosen
        request.working_school = next((s for s in mine if s.pk == chosen), None)
    request.school_choices = mine


class SchoolChoiceMiddleware:
    """Work in the school the session chose for the rest of the request."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            request.working_school = None
            request.working_school_id = None
            request.school_choices = []
            return self.get_response(request)
        choose_for(request)
        token = set_working_school(request.working_school_id)
        try:
            return self.get_response(request)
        finally:
            reset_working_school(token)


# Pages of one record (a learner, a class, an import): after a switch, another school's are 404.
_RECORD_PAGE = re.compile(r"/\d+(/|$)")


@require_POST
def school_choose(request: HttpRequest) -> HttpResponse:
    """Work in another school (or all of a trust's); back to the page, or home from a record."""
    user = request.user
    if not user.is_authenticated or staff_role(user) is None and trust_role(user) is None:
        return HttpResponseRedirect("/")
    wanted = request.POST.get("school", "")
    if wanted == ALL_SCHOOLS and trust_role(user) is not None:
        request.session[SESSION_KEY] = ALL_SCHOOLS
    else:
        ids = {str(school.pk): school.pk for school in schools_of(user)}
        if wanted in ids:
            request.session[SESSION_KEY] = ids[wanted]
    target = request.POST.get("next", "")
    safe = url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    if not safe or not target.startswith("/") or _RECORD_PAGE.search(target.split("?")[0]):
        target = "/"
    return HttpResponseRedirect(target)
