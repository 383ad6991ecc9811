"""Staff pages for partner admins: the staff accounts, their roles and groups, the settings."""

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_post_parameters

from accounts.access import (
    admin_required,
    assigned_role,
    is_trust_admin,
    one_school,
    trust_role,
    working_school_ids,
)
from accounts.models import StaffRole
from accounts.selectors import staff_accounts
from kit.addresses import client_address
from schools.models import PartnerSettings
from staff.forms import PartnerSettingsForm, StaffChangeForm, StaffNewForm
from staff.services import StaffAccountRefused, partner_settings_update, staff_add, staff_change


@admin_required
def staff_list(request: HttpRequest) -> HttpResponse:
    """List the staff accounts with their roles and groups."""
    accounts = (
        staff_accounts(include_inactive=True, school_ids=working_school_ids(request.user))
        .select_related("staff_profile", "learner")
        .prefetch_related("school_groups", "school_roles")
    )
    # The role held here, also by those who can no longer sign in (staff_role would say None).
    rows = [
        (account, StaffRole(role))
        for account in accounts
        if (role := trust_role(account) or assigned_role(account))
    ]
    return render(request, "accounts/staff_list.html", {"rows": rows})


@sensitive_post_parameters("password1", "password2")
@admin_required
@one_school
def staff_new(request: HttpRequest) -> HttpResponse:
    """Add a staff account with a role, groups and a first password."""
    form = StaffNewForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        account = staff_add(
            username=data["username"],
            email=data["email"],
            role=data["role"],
            password=data["password1"],
            groups=data["groups"],
            first_name=data["first_name"],
            last_name=data["last_name"],
            added_by=request.user,
            address=client_address(request),
        )
        messages.success(
            request,
            _("%(username)s can now sign in as %(role)s.")
            % {
                "username": account.get_username(),
                "role": StaffRole(assigned_role(account)).label,
            },
        )
        return redirect("staff:staff_list")
    return render(request, "accounts/staff_form.html", {"form": form, "account": None})


@admin_required
def staff_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Change a staff account's role, groups, email or access."""
    # Staff of the school worked in; a trust role's account is the trust admins' to change.
    account = get_object_or_404(
        staff_accounts(include_inactive=True, school_ids=working_school_ids(request.user)),
        pk=pk,
    )
    if trust_role(account) is not None and not is_trust_admin(request.user):
        raise Http404
    form = StaffChangeForm.for_account(
        request.POST if request.method == "POST" else None, account=account
    )
    if request.method == "POST" and form.is_valid():
        try:
            changed = staff_change(
                user=account,
                changed_by=request.user,
                address=client_address(request),
                **form.cleaned_data,
            )
        except StaffAccountRefused as refusal:
            form.add_error(None, str(refusal))
        else:
            messages.success(request, _("Saved.") if changed else _("Nothing needed changing."))
            return redirect("staff:staff_list")
    return render(request, "accounts/staff_form.html", {"form": form, "account": account})


@admin_required
@one_school
def partner_settings(request: HttpRequest) -> HttpResponse:
    """Choose who sees results besides the pastoral staff and safeguarding leads."""
    form = PartnerSettingsForm(
        request.POST if request.method == "POST" else None,
        instance=PartnerSettings.current(),
        by_trust=trust_role(request.user) is not None,
    )
    if request.method == "POST" and form.is_valid():
        changed = partner_settings_update(
            changed_by=request.user, address=client_address(request), **form.cleaned_data
        )
        messages.success(request, _("Saved.") if changed else _("Nothing needed changing."))
        return redirect("staff:settings")
    return render(request, "accounts/settings.html", {"form": form})
