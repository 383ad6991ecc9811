"""The safeguarding leads' alert pages, and a learner's "I want to talk to someone"."""

from django.contrib import messages
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.access import (
    learner_required,
    safeguarding_required,
    staff_name,
    trust_role,
    working_school_ids,
)
from accounts.models import StaffRole
from assessments.learner_results import helplines, school_contacts
from kit.addresses import client_address
from safeguarding.asking import alert_raise_for_request
from safeguarding.entries import NoChronology, entry_add_action
from safeguarding.forms import AcknowledgeForm, ActionForm, TalkForm
from safeguarding.models import Alert
from safeguarding.selectors import alerts_for_list
from safeguarding.services import alert_acknowledge
from schools.models import PartnerSettings
from signin.second_factor import step_up_required


def _alerts_seen_by(user, alerts: QuerySet) -> QuerySet:
    """Return the alerts of the school worked in; a trust lead's escalated ones from every school.

    (The trust safeguarding leads' banner counts those wherever they work: they can open them.)
    """
    schools = working_school_ids(user)
    if schools is None:
        return alerts
    seen = Q(school_id__in=schools)
    if trust_role(user) == StaffRole.TRUST_SAFEGUARDING_LEAD:
        seen |= Q(escalated_at__isnull=False)
    return alerts.filter(seen)


@safeguarding_required
@step_up_required
def alert_list(request: HttpRequest) -> HttpResponse:
    """List the alerts: those waiting for acknowledgement, or every one."""
    show = "all" if request.GET.get("show") == "all" else "waiting"
    alerts = _alerts_seen_by(request.user, alerts_for_list(show=show))[:200]
    return render(request, "safeguarding/alert_list.html", {"alerts": alerts, "show": show})


def _alert_of(request: HttpRequest, pk: int) -> Alert:
    """Return an alert the lead may open (404 otherwise), with what its page shows."""
    alerts = Alert.objects.select_related("learner", "follow_up", "attempt", "test_recipient")
    return get_object_or_404(_alerts_seen_by(request.user, alerts), pk=pk)


def _alert_page(request: HttpRequest, alert: Alert, **forms) -> HttpResponse:
    """Render the alert's page, with the acknowledge or add-an-action form (posted or blank)."""
    if alert.is_acknowledged:
        forms.setdefault("action_form", ActionForm(school_id=alert.school_id))
    else:
        forms.setdefault("form", AcknowledgeForm(alert=alert))
    return render(request, "safeguarding/alert_detail.html", {"alert": alert, **forms})


@safeguarding_required
@step_up_required
def alert_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Show one alert: what raised it, for whom, its emails, and the acknowledge form."""
    return _alert_page(request, _alert_of(request, pk))


@safeguarding_required
@require_POST
@step_up_required
def alert_acknowledge_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Acknowledge an alert with what was done and its category (audited)."""
    alert = _alert_of(request, pk)
    form = AcknowledgeForm(request.POST, alert=alert)
    if not form.is_valid():
        # Taken on by another lead meanwhile or not, what was typed stays on the page.
        return _alert_page(request, alert, form=form)
    if alert_acknowledge(
        alert=alert, by=request.user, address=client_address(request), **form.cleaned_data
    ):
        messages.success(request, _("Alert acknowledged. Thank you."))
        return redirect("safeguarding:alert", pk=alert.pk)
    return _already_acknowledged(request, alert, added=bool(form.cleaned_data.get("action")))


def _already_acknowledged(request: HttpRequest, alert: Alert, *, added: bool) -> HttpResponse:
    alert.refresh_from_db()
    # Named as the header names staff; the kept username once their account is gone.
    by = alert.acknowledged_by
    name = {"name": staff_name(by) if by is not None else alert.acknowledged_by_username}
    if added and alert.learner_id is not None and alert.acknowledged_by_id != request.user.pk:
        message = _(
            "%(name)s had already taken this alert on; your action was added to the chronology."
        )
    else:
        message = _("%(name)s had already acknowledged this alert.")
    messages.info(request, message % name)
    return redirect("safeguarding:alert", pk=alert.pk)


@safeguarding_required
@require_POST
@step_up_required
def alert_add_action(request: HttpRequest, pk: int) -> HttpResponse:
    """Add a later action, with a note, to a concern already taken on."""
    alert = _alert_of(request, pk)
    back = redirect("safeguarding:alert", pk=alert.pk)
    if not alert.is_acknowledged:
        messages.info(request, _("Acknowledge the alert first: that records the first action."))
        return back
    if alert.learner_id is None:
        messages.error(request, _no_chronology_message())
        return back
    form = ActionForm(request.POST, school_id=alert.school_id)
    if not form.is_valid():
        return _alert_page(request, alert, action_form=form)
    try:
        entry_add_action(alert=alert, by=request.user, **form.cleaned_data)
    except NoChronology:  # erased since the alert was read
        messages.error(request, _no_chronology_message())
        return back
    messages.success(request, _("Action added to the chronology."))
    return back


def _no_chronology_message() -> str:
    return _(
        "This learner's personal data was erased, and their safeguarding chronology with it: "
        "there is nowhere to record the action."
    )


@learner_required
def talk(request: HttpRequest) -> HttpResponse:
    """Let a learner ask to talk to someone; say plainly what happens next, and when."""
    learner = request.learner
    partner = PartnerSettings.current()
    form = TalkForm(
        request.POST if request.method == "POST" else None,
        level=learner.level,
        contacts=school_contacts(learner, partner),
    )
    context = {"partner": partner, "helplines": helplines(partner), "primary": form.primary}
    if request.method == "POST" and form.is_valid():
        chosen = form.cleaned_data
        _alert, new = alert_raise_for_request(
            learner=learner,
            about=chosen["about"],
            contact=chosen["contact"],
            unsafe=chosen["unsafe"],
        )
        sent = {"already": not new, "unsafe": chosen["unsafe"], "said": any(chosen.values())}
        return render(request, "safeguarding/talk_sent.html", {**context, **sent})
    return render(request, "safeguarding/talk.html", {**context, "form": form})
