"""Staff CSV download of the learner list, with the search and filters in force."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from accounts.access import sees_results, staff_required
from kit.addresses import client_address
from kit.csv_export import csv_download
from learners.exports import LEARNER_HEADER, learner_list_export
from learners.list_forms import LearnerSearchForm
from signin.second_factor import step_up_required


@staff_required
@require_GET
@step_up_required
def learners_csv(request: HttpRequest) -> HttpResponse:
    """Download the learners the list shows for its search and filters, as CSV."""
    form = LearnerSearchForm(
        request.GET, user=request.user, with_results=sees_results(request.user)
    )
    if not form.is_valid():
        # Translators: %(errors)s is the search form's error messages, in sentences.
        messages.error(request, _("Nothing was exported: %(errors)s") % {"errors": _errors(form)})
        return redirect(f"{reverse('learners:list')}?{request.GET.urlencode()}")
    rows = learner_list_export(
        filters=form.filters(), exported_by=request.user, address=client_address(request)
    )
    return csv_download(f"learners-{_today()}.csv", LEARNER_HEADER, rows)


def _today() -> str:
    return timezone.localdate().isoformat()


def _errors(form) -> str:
    return " ".join(str(error) for errors in form.errors.values() for error in errors)
