"""The cohort dashboard: the staff home page."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.http import urlencode

from dashboard.forms import CohortFilterForm
from dashboard.summary import cohort_summary
from portal.access import staff_required


@staff_required
def dashboard(request: HttpRequest) -> HttpResponse:
    """Show the cohort at a glance, filtered by level and date range."""
    form = CohortFilterForm(request.GET or None)
    filters = form.cohort_filters()
    filter_query = urlencode(form.filter_detail())
    return render(
        request,
        "dashboard/home.html",
        {
            "form": form,
            "filtered": bool(filter_query),
            "summary": cohort_summary(filters),
            "filter_query": filter_query,
        },
    )
