"""Base views: the home page that sends each role to its place."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from portal.access import is_staff_member, learner_for


def home(request: HttpRequest) -> HttpResponse:
    """Send staff to the learner list, learners to their page, everyone else to sign in."""
    if is_staff_member(request.user):
        return redirect("learners:list")
    if learner_for(request.user) is not None:
        return redirect("assessments:my_assessments")
    if request.user.is_authenticated:
        # Signed in but neither role (e.g. a learner whose registration never completed).
        return render(request, "portal/no_access.html", status=403)
    return redirect("login")
