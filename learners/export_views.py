"""Staff CSV downloads: the learner list and the results, with the filters in force."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from audit.models import AuditEvent
from audit.services import audit_record
from dashboard.forms import CohortFilterForm
from learners.exports import (
    LEARNER_HEADER,
    RESULT_HEADER,
    learner_export_rows,
    result_export_rows,
)
from learners.forms import LearnerSearchForm
from portal.access import staff_required
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
    audit_record(request=request, action=AuditEvent.Action.LEARNERS_EXPORTED, q=query, level=level)
    return csv_download(
        f"learners-{_today()}.csv", LEARNER_HEADER, learner_export_rows(query=query, level=level)
    )


@staff_required
@require_GET
def results_csv(request: HttpRequest) -> HttpResponse:
    """Download the results of completed assessments for the dashboard's filters, as CSV."""
    form = CohortFilterForm(request.GET)
    if not form.is_valid():
        # The dashboard shows the same form with its error summary.
        messages.error(request, _("Nothing was exported: correct the filters first."))
        return redirect(f"{reverse('dashboard:home')}?{request.GET.urlencode()}")
    detail = form.filter_detail()
    audit_record(request=request, action=AuditEvent.Action.RESULTS_EXPORTED, **detail)
    return csv_download(
        f"results-{_today()}.csv", RESULT_HEADER, result_export_rows(form.cohort_filters())
    )


def _today() -> str:
    return timezone.localdate().isoformat()


def _errors(form) -> str:
    return " ".join(str(error) for errors in form.errors.values() for error in errors)
