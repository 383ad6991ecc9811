"""Pages about a learner's personal data: their own privacy page; staff's export, erasure, hold."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from accounts.access import learner_required, whole_school_required, whole_school_results_required
from kit.addresses import client_address
from learners.models import Learner, Level
from privacy.forms import RecordsHoldForm
from privacy.selectors import HOLD_UNTIL_AGE, hold_of, learner_contact
from privacy.services import (
    ErasureDeferred,
    learner_data_export,
    learner_erase,
    records_hold_lift,
    records_hold_place,
)
from schools.models import PartnerSettings

# The name of the confirmation page's submit button: a POST without it (a stray or replayed
# request, a script) only shows the page again.
CONFIRM_FIELD = "erase"
# The hold page's two buttons; a POST with neither shows the page again.
PLACE_FIELD, LIFT_FIELD = "place", "lift"


@learner_required
@require_GET
def my_privacy(request: HttpRequest) -> HttpResponse:
    """Tell a learner, in words for their age, what is kept about them, who sees it, how long."""
    partner = PartnerSettings.current()
    return render(
        request,
        "privacy/my_privacy.html",
        {
            "primary": request.learner.level == Level.PRIMARY,
            "partner": partner,
            "contact": learner_contact(request.learner),
            "hold_until_age": HOLD_UNTIL_AGE,
        },
    )


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
    hold = hold_of(learner, today=timezone.localdate())
    return render(request, "privacy/erase_confirm.html", {"learner": learner, "hold": hold})


@whole_school_required
def records_hold_change(request: HttpRequest, pk: int) -> HttpResponse:
    """Show a learner's safeguarding hold, then place or lift it on confirmation (audited)."""
    learner = get_object_or_404(Learner, pk=pk, status=Learner.Status.ACTIVE)
    # Bound only by the "place" button: a GET, or a POST with neither button, shows the page.
    form = RecordsHoldForm(request.POST if PLACE_FIELD in request.POST else None)
    if request.method == "POST" and LIFT_FIELD in request.POST:
        lifted = records_hold_lift(
            learner=learner, lifted_by=request.user, address=client_address(request)
        )
        if lifted:
            messages.success(request, _("The hold is lifted."))
        else:
            messages.info(request, _("Nothing was holding these records."))
        return redirect("learners:detail", pk=learner.pk)
    if form.is_valid():
        placed = records_hold_place(
            learner=learner,
            placed_by=request.user,
            address=client_address(request),
            reason=form.cleaned_data["reason"],
        )
        if placed:
            messages.success(request, _("The records are held until someone lifts the hold."))
        else:
            messages.info(request, _("A member of staff has already placed a hold."))
        return redirect("learners:detail", pk=learner.pk)
    hold = hold_of(learner, today=timezone.localdate())
    return render(
        request, "privacy/hold_confirm.html", {"learner": learner, "hold": hold, "form": form}
    )
