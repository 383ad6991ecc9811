"""Staff CSV downloads: the learner list and the results, with the filters in force."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from dashboard.forms import CohortFilterForm
from learners.exports import LEARNER_HEADER, RESULT_HEADER, learners_export, results_export
from learners.forms import LearnerSearchForm
from portal.access import staff_required
from portal.addresses import client_address
from portal.csv_export import csv_download


@staff_required
@require_GET
def learners_csv(request: HttpRequest) -> HttpResponse:
    """Download the learners the list shows for its search and level, as CSV."""
    form = LearnerSearchForm(request.GET)
    if not form.is_valid():
        # Translators: %(errors)s is the search form's error messages, in sentences.
        messages.error(request, _("Nothing was exported: %(errors)s") % {"errors": _errors(form)})
        return redirect(f"{reverse('learners:list')}?{request.GET.urlencode()}")
    query, level = form.cleaned_data["q"].strip(), form.cleaned_data["level"]
    rows = learners_export(
        query=query, level=level, exported_by=request.user, address=client_address(request)
    )
    return csv_download(f"learners-{_today()}.csv", LEARNER_HEADER, rows)


@staff_required
@require_GET
def results_csv(request: HttpRequest) -> HttpResponse:
    """Download the results of completed assessments for the dashboard's filters, as CSV."""
    form = CohortFilterForm(request.GET)
    if not form.is_valid():
        # The dashboard shows the same form with its error summary.
        messages.error(request, _("Nothing was exported: correct the filters first."))
        return redirect(f"{reverse('dashboard:home')}?{request.GET.urlencode()}")
    rows = results_export(
        filters=form.cohort_filters(),
        filter_detail=form.filter_detail(),
        exported_by=request.user,
        address=client_address(request),
    )
    return csv_download(f"results-{_today()}.csv", RESULT_HEADER, rows)


def _today() -> str:
    return timezone.localdate().isoformat()


def _errors(form) -> str:
    return " ".join(str(error) for errors in form.errors.values() for error in errors)
