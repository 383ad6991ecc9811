"""The cohort dashboard: the staff home page."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from portal.access import staff_required


@staff_required
def dashboard(request: HttpRequest) -> HttpResponse:
    """Show the cohort at a glance (placeholder until the dashboard lands)."""
    return render(request, "dashboard/home.html", {})
