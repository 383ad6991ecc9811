"""Staff pages about one learner's personal data: export it, or erase it locally."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from learners.models import Learner
from portal.access import whole_school_required, whole_school_results_required
from portal.addresses import client_address
from privacy.services import ErasureDeferred, learner_data_export, learner_erase

# The name of the confirmation page's submit button: a POST without it (a stray or replayed
# request, a script) only shows the page again.
CONFIRM_FIELD = "erase"


@whole_school_results_required
@require_GET
def learner_export_download(request: HttpRequest, pk: int) -> HttpResponse:
    """Download everything held about a learner as a JSON file."""
    learner = get_object_or_404(Learner, pk=pk, status=Learner.Status.ACTIVE)
    export = learner_data_export(
        learner=learner, exported_by=request.user, address=client_address(request)
    )
    response = JsonResponse(export, json_dumps_params={"indent": 2, "ensure_ascii": False})
    response["Content-Disposition"] = f'attachment; filename="learner-{learner.pk}.json"'
    return response


@whole_school_required
def learner_erase_confirm(request: HttpRequest, pk: int) -> HttpResponse:
    """Ask to confirm, then erase a learner's personal data here (not upstream)."""
    statuses = [Learner.Status.ACTIVE, Learner.Status.ERASED]
    learner = get_object_or_404(Learner, pk=pk, status__in=statuses)
    if learner.status == Learner.Status.ERASED:
        # A second click or a back-button resubmission: nothing left to do.
        messages.info(
            request,
            _("The personal data of learner #%(number)s is already erased.")
            % {"number": learner.pk},
        )
        return redirect("learners:list")
    if request.method == "POST" and CONFIRM_FIELD in request.POST:
        try:
            learner_erase(learner=learner, erased_by=request.user, address=client_address(request))
        except ErasureDeferred:
            messages.error(
                request,
                _(
                    "An assessment of this learner is being sent to the assessment service "
                    "right now. Nothing was erased: try again in a few minutes."
                ),
            )
        else:
            messages.success(
                request,
                _("The personal data of learner #%(number)s is erased.") % {"number": learner.pk},
            )
            return redirect("learners:list")
    return render(request, "privacy/erase_confirm.html", {"learner": learner})
