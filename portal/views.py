"""Base views: the home page that sends each role to its place, signing out, the 500 page."""

import sys

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseServerError,
)
from django.shortcuts import redirect, render
from django.template import loader
from django.utils.translation import gettext as _
from django.views import defaults

from accounts.access import is_staff_member, learner_for, trust_role
from accounts.models import StaffRole
from ops.database import DATABASE_TROUBLE
from portal.middleware import database_unavailable_page, standalone_words


def home(request: HttpRequest) -> HttpResponse:
    """Send staff to the cohort dashboard, trust viewers to the trust's, learners to their page."""
    if is_staff_member(request.user):
        return redirect("dashboard:home")
    if trust_role(request.user) == StaffRole.TRUST_VIEWER:
        return redirect("dashboard:trust")  # the trust's figures are all they see
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


def server_error(request: HttpRequest) -> HttpResponse:
    """Answer an uncaught error: 503 if the database did not answer, else the 500 page.

    Django calls it (handler500) while handling the error, so the error is the one in hand.
    """
    error = sys.exc_info()[1]
    if isinstance(error, DATABASE_TROUBLE):
        return database_unavailable_page(request, error)
    # Django's own view draws the page without the request: a learner's words need it.
    page = loader.render_to_string(defaults.ERROR_500_TEMPLATE_NAME, standalone_words(request))
    return HttpResponseServerError(page)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Answer a request the portal could not read with the 400 page, in the reader's words."""
    page = loader.render_to_string(defaults.ERROR_400_TEMPLATE_NAME, standalone_words(request))
    return HttpResponseBadRequest(page)
