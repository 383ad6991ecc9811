"""Staff pages for partner admins: the staff accounts, their roles and groups, the settings."""

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_post_parameters

from accounts.access import admin_required, assigned_role
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
        staff_accounts(include_inactive=True)
        .select_related("staff_profile", "learner")
        .prefetch_related("school_groups")
    )
    # The role held, also by those who can no longer sign in (staff_role would say None).
    rows = [(account, StaffRole(assigned_role(account))) for account in accounts]
    return render(request, "accounts/staff_list.html", {"rows": rows})


@sensitive_post_parameters("password1", "password2")
@admin_required
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
                "role": account.staff_profile.get_role_display(),
            },
        )
        return redirect("staff:staff_list")
    return render(request, "accounts/staff_form.html", {"form": form, "account": None})


@admin_required
def staff_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Change a staff account's role, groups, email or access."""
    account = get_object_or_404(get_user_model(), pk=pk, learner__isnull=True)
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
def partner_settings(request: HttpRequest) -> HttpResponse:
    """Choose who sees results besides the pastoral staff and safeguarding leads."""
    form = PartnerSettingsForm(
        request.POST if request.method == "POST" else None, instance=PartnerSettings.current()
    )
    if request.method == "POST" and form.is_valid():
        changed = partner_settings_update(
            changed_by=request.user, address=client_address(request), **form.cleaned_data
        )
        messages.success(request, _("Saved.") if changed else _("Nothing needed changing."))
        return redirect("staff:settings")
    return render(request, "accounts/settings.html", {"form": form})
