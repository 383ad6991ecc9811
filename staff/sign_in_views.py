"""Staff pages about signing in: unlink a school account, reset a second factor, end sessions.

Each action is a page that says what will happen and asks to confirm; only a POST with the
confirming button acts (a POST without it shows the page again), then comes back to the
account's page with a message.
"""

from django.contrib import messages
from django.contrib.auth import logout
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from accounts.access import (
    admin_required,
    any_staff_required,
    one_school,
    staff_name,
    working_school,
)
from kit.addresses import client_address
from staff import sign_in
from staff.selectors import staff_account_managed_by
from staff.services import StaffAccountRefused

CONFIRM = "confirm"  # the confirming button's name (value "yes")


def _confirmed(request: HttpRequest) -> bool:
    return request.method == "POST" and request.POST.get(CONFIRM) == "yes"


def _managed(request: HttpRequest, pk: int):
    account = staff_account_managed_by(request.user, pk)
    if account is None:
        raise Http404
    return account


@admin_required
@one_school
def staff_identity_unlink(request: HttpRequest, pk: int) -> HttpResponse:
    """Unlink a school identity (Google, Microsoft, the trust's) from a staff account."""
    account = _managed(request, pk)
    if _confirmed(request):
        identity = request.POST.get("identity", "")
        try:
            label = sign_in.staff_identity_unlink(
                account=account,
                identity_id=int(identity) if identity.isdigit() else 0,
                school_id=working_school(request.user),
                unlinked_by=request.user,
                address=client_address(request),
            )
        except StaffAccountRefused as refusal:
            messages.error(request, str(refusal))
        else:
            messages.success(
                request,
                _("%(identity)s is no longer linked to %(name)s.")
                % {"identity": label, "name": staff_name(account)},
            )
        return redirect("staff:staff_edit", pk=account.pk)
    return render(
        request,
        "accounts/staff_sign_in_action.html",
        {"account": account, "action": "unlink", "methods": sign_in.sign_in_methods(account)},
    )


@admin_required
@one_school
def staff_second_factor_reset(request: HttpRequest, pk: int) -> HttpResponse:
    """Reset another member of staff's second factor; they set up a new one at next sign-in."""
    account = _managed(request, pk)
    if _confirmed(request):
        try:
            removed = sign_in.staff_second_factor_reset(
                account=account,
                school_id=working_school(request.user),
                reset_by=request.user,
                address=client_address(request),
            )
        except StaffAccountRefused as refusal:
            messages.error(request, str(refusal))
        else:
            if removed:
                messages.success(
                    request,
                    _(
                        "%(name)s's second factor is reset and they are signed out everywhere. "
                        "They set up a new one when they next sign in."
                    )
                    % {"name": staff_name(account)},
                )
            else:
                messages.info(
                    request,
                    _("%(name)s has no second factor set up: nothing was reset.")
                    % {"name": staff_name(account)},
                )
        return redirect("staff:staff_edit", pk=account.pk)
    return render(
        request,
        "accounts/staff_sign_in_action.html",
        {
            "account": account,
            "action": "reset",
            "own": account.pk == request.user.pk,
            "methods": sign_in.sign_in_methods(account),
        },
    )


@admin_required
@one_school
def staff_sessions_end(request: HttpRequest, pk: int) -> HttpResponse:
    """Sign another member of staff out everywhere (a lost device, a shared computer)."""
    account = _managed(request, pk)
    if _confirmed(request):
        try:
            ended = sign_in.staff_sessions_end(
                account=account, ended_by=request.user, address=client_address(request)
            )
        except StaffAccountRefused as refusal:
            messages.error(request, str(refusal))
        else:
            messages.success(
                request,
                ngettext(
                    "%(name)s is signed out everywhere (%(count)d session ended).",
                    "%(name)s is signed out everywhere (%(count)d sessions ended).",
                    ended,
                )
                % {"name": staff_name(account), "count": ended},
            )
        return redirect("staff:staff_edit", pk=account.pk)
    return render(
        request,
        "accounts/staff_sign_in_action.html",
        {"account": account, "action": "sessions", "own": account.pk == request.user.pk},
    )


@any_staff_required
def sign_out_everywhere(request: HttpRequest) -> HttpResponse:
    """Sign oneself out on every device, this one included, then show the sign-in page."""
    if _confirmed(request):
        sign_in.own_sessions_end(user=request.user, address=client_address(request))
        logout(request)
        # Said after the session is gone, as signing out says it.
        messages.success(
            request, _("You are signed out everywhere: on this device and every other.")
        )
        return redirect("login")
    return render(request, "accounts/sign_out_everywhere.html")
