"""Pages about a learner's personal data: their own privacy page; staff's export, erasure, hold."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from accounts.access import (
    is_safeguarding_lead,
    learner_required,
    sees_results,
    whole_school_required,
    whole_school_results_required,
)
from kit.addresses import client_address
from learners.access import visible_learner_or_404
from learners.models import Learner, Level
from privacy.forms import HoldLiftForm, RecordsHoldForm
from privacy.holds import HoldLiftRefused, records_hold_lift, records_hold_place
from privacy.selectors import HOLD_UNTIL_AGE, erasure_wait, hold_of, learner_contact
from privacy.services import (
    ErasureAlertWaiting,
    ErasureDeferred,
    ErasureRefused,
    learner_data_export,
    learner_erase,
)
from schools.models import PartnerSettings
from signin.second_factor import step_up_required

# The name of the confirmation page's submit button: a POST without it (a stray or replayed
# request, a script) only shows the page again.
CONFIRM_FIELD = "erase"
# The hold page's two buttons (the erasure page has "lift" too); a POST with neither shows
# the page again.
PLACE_FIELD, LIFT_FIELD = "place", "lift"

ERASURE_DEFERRED = gettext_lazy(
    "An assessment of this learner is being sent to the assessment service right now. "
    "Nothing was erased: try again in a few minutes."
)
ONLY_A_LEAD_LIFTS = gettext_lazy(
    "Only a safeguarding lead can lift a safeguarding hold. Nothing was changed: ask one of them."
)


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
@step_up_required
def learner_export_download(request: HttpRequest, pk: int) -> HttpResponse:
    """Download everything held about a learner as a JSON file."""
    learner = visible_learner_or_404(request.user, pk, status=Learner.Status.ACTIVE)
    export = learner_data_export(
        learner=learner, exported_by=request.user, address=client_address(request)
    )
    response = JsonResponse(export, json_dumps_params={"indent": 2, "ensure_ascii": False})
    response["Content-Disposition"] = f'attachment; filename="learner-{learner.pk}.json"'
    return response


@whole_school_required
@step_up_required
def learner_erase_confirm(request: HttpRequest, pk: int) -> HttpResponse:
    """Ask to confirm, then erase a learner's personal data here (not upstream).

    Under a safeguarding hold a lead lifts it here first, saying why; the erasure itself
    refuses while a hold or an unacknowledged alert keeps the records (learner_erase).
    """
    statuses = [Learner.Status.ACTIVE, Learner.Status.ERASED]
    learner = visible_learner_or_404(request.user, pk, status__in=statuses)
    if learner.status == Learner.Status.ERASED:
        # A second click or a back-button resubmission: nothing left to do.
        messages.info(
            request,
            _("The personal data of learner #%(number)s is already erased.")
            % {"number": learner.pk},
        )
        return redirect("learners:list")
    lift_form = HoldLiftForm(request.POST if LIFT_FIELD in request.POST else None)
    status = 200
    if request.method == "POST" and CONFIRM_FIELD in request.POST:
        try:
            learner_erase(learner=learner, erased_by=request.user, address=client_address(request))
        except ErasureDeferred:
            messages.error(request, ERASURE_DEFERRED)
        except ErasureRefused as refused:
            messages.error(request, _erasure_refused_message(refused, request.user))
            status = 409
        else:
            messages.success(
                request,
                _("The personal data of learner #%(number)s is erased.") % {"number": learner.pk},
            )
            return redirect("learners:list")
    elif lift_form.is_valid():
        status = _hold_lift(request, learner, lift_form, whole=True)
        if status is None:
            return redirect("privacy:erase", pk=learner.pk)
    return render(
        request,
        "privacy/erase_confirm.html",
        {**_hold_context(request, learner), "lift_form": lift_form},
        status=status,
    )


@whole_school_required
def records_hold_change(request: HttpRequest, pk: int) -> HttpResponse:
    """Show a learner's safeguarding hold, then place it, or lift it as a lead (audited)."""
    learner = visible_learner_or_404(request.user, pk, status=Learner.Status.ACTIVE)
    # Each bound only by its own button: a GET, or a POST with neither button, shows the page.
    form = RecordsHoldForm(request.POST if PLACE_FIELD in request.POST else None)
    lift_form = HoldLiftForm(request.POST if LIFT_FIELD in request.POST else None)
    status = 200
    if lift_form.is_valid():
        status = _hold_lift(request, learner, lift_form)
        if status is None:
            return redirect("learners:detail", pk=learner.pk)
    elif form.is_valid():
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
    context = {**_hold_context(request, learner), "form": form, "lift_form": lift_form}
    return render(request, "privacy/hold_confirm.html", context, status=status)


def _hold_lift(request: HttpRequest, learner: Learner, form: HoldLiftForm, **options) -> int | None:
    """Lift the learner's hold with the form's reason and say so; else the page's status."""
    try:
        lifted = records_hold_lift(
            learner=learner,
            lifted_by=request.user,
            address=client_address(request),
            reason=form.cleaned_data["reason"],
            **options,
        )
    except HoldLiftRefused as refused:
        if refused.code == HoldLiftRefused.NO_REASON:
            form.add_error("reason", _("Say why the hold can be lifted."))
            return 200
        messages.error(request, ONLY_A_LEAD_LIFTS)
        return 403
    if lifted:
        messages.success(request, _("The hold is lifted."))
    else:
        messages.info(request, _("Nothing was holding these records."))
    return None


def _hold_context(request: HttpRequest, learner: Learner) -> dict:
    """Return what the hold and erasure pages show: the hold, what erasure waits for, who asks."""
    today = timezone.localdate()
    return {
        "learner": learner,
        "hold": hold_of(learner, today=today),
        "waits_for": erasure_wait(learner, today=today),
        "is_lead": is_safeguarding_lead(request.user),
        # Whether a safeguarding concern is behind it, only to staff who read results (as
        # privacy_tags.records_hold_status).
        "show_why": sees_results(request.user),
    }


def _erasure_refused_message(refused: ErasureRefused, user) -> str:
    """Say why nothing was erased and what must happen first, in words for the asker."""
    if isinstance(refused, ErasureAlertWaiting):
        if sees_results(user):
            return _(
                "Nothing was erased: a safeguarding alert about this learner has not been "
                "acknowledged. A safeguarding lead must acknowledge it first."
            )
        return _(
            "Nothing was erased: a safeguarding matter about this learner is waiting for the "
            "safeguarding leads. Ask one of them."
        )
    if is_safeguarding_lead(user):
        return _(
            "Nothing was erased: these records are under a safeguarding hold. Lift the hold "
            "first, saying why, then erase them."
        )
    return _(
        "Nothing was erased: these records are under a safeguarding hold. Only a "
        "safeguarding lead can lift it and then erase them: ask one of them."
    )
