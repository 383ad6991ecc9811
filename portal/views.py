"""Base views: the home page that sends each role to its place, and signing out."""

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from accounts.access import is_staff_member, learner_for


def home(request: HttpRequest) -> HttpResponse:
    """Send staff to the cohort dashboard, learners to their page, everyone else to sign in."""
    if is_staff_member(request.user):
        return redirect("dashboard:home")
    if learner_for(request.user) is not None:
        return redirect("assessments:my_assessments")
    if request.user.is_authenticated:
        # Signed in but neither role (e.g. a learner whose registration never completed).
        return render(request, "portal/no_access.html", status=403)
    return redirect("login")


class SignOutView(auth_views.LogoutView):
    """Sign out on POST; a GET (a typed or bookmarked address) asks to confirm."""

    http_method_names = ["get", "post", "options"]

    def get(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect("login")
        return render(request, "registration/sign_out.html")

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = super().post(request, *args, **kwargs)
        # Said after the session is gone, so a shared computer shows it plainly.
        messages.success(request, _("You have signed out."))
        return response
