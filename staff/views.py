"""Staff pages for partner admins: the staff accounts, their roles and groups, the settings."""

from django.contrib import messages
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_post_parameters

from accounts.access import (
    admin_required,
    is_trust_admin,
    one_school,
    role_in_school,
    trust_role,
    working_school,
    working_school_ids,
)
from accounts.models import StaffRole
from accounts.password_sign_in import schools_without_passwords
from accounts.selectors import staff_accounts
from classes.models import SchoolGroup
from kit.addresses import client_address
from schools.models import PartnerSettings, School, several_schools
from staff.forms import PartnerSettingsForm, StaffChangeForm, StaffNewForm
from staff.selectors import staff_account_managed_by
from staff.services import StaffAccountRefused, partner_settings_update, staff_add, staff_change
from staff.sign_in import sign_in_methods


@admin_required
def staff_list(request: HttpRequest) -> HttpResponse:
    """List the staff accounts with their roles and groups (a trust admin: every school's)."""
    schools = working_school_ids(request.user)
    current = SchoolGroup.objects.current()  # the groups they work with now, not last year's
    groups = current if schools is None else current.filter(school_id__in=schools)
    everyone = is_trust_admin(request.user) and several_schools()
    accounts = (
        staff_accounts(include_inactive=True, school_ids=None if everyone else schools)
        .select_related("staff_profile", "learner")
        .prefetch_related(
            Prefetch("school_groups", queryset=groups),
            "school_roles",
            # How each signs in: school identities and second factors.
            "socialaccount_set",
            "authenticator_set",
        )
    )
    names = {school.pk: school.name for school in School.everyone()}
    passwords_off = schools_without_passwords()
    rows = []
    for account in accounts:
        # The role held here, also by those who can no longer sign in (staff_role says None).
        role = role_in_school(account, working_school(request.user))
        if everyone:
            role = trust_role(account) or role  # trust roles are shown once there is a trust
        held = sorted(
            f"{names.get(link.school_id, '?')}: {StaffRole(link.role).label}"
            for link in account.school_roles.all()
        )
        rows.append(
            (
                account,
                StaffRole(role) if role else None,
                held if everyone else [],
                sign_in_methods(account, passwords_off),
            )
        )
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
                "role": StaffRole(role_in_school(account, working_school(request.user))).label,
            },
        )
        return redirect("staff:staff_list")
    return render(request, "accounts/staff_form.html", {"form": form, "account": None})


@admin_required
@one_school
def staff_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Change a staff account's role, groups, email or access."""
    # Staff of the school worked in; a trust role's account is the trust admins' to change.
    # (A trust admin may give anyone a role in the school they work in.)
    schools = None if is_trust_admin(request.user) else working_school_ids(request.user)
    account = get_object_or_404(staff_accounts(include_inactive=True, school_ids=schools), pk=pk)
    if trust_role(account) is not None and not is_trust_admin(request.user):
        raise Http404
    form = StaffChangeForm.for_account(
        request.POST if request.method == "POST" else None, account=account
    )
    if request.method == "POST" and form.is_valid():
        try:
            changed = staff_change(
                user=account,
                school_id=working_school(request.user),
                changed_by=request.user,
                address=client_address(request),
                **form.cleaned_data,
            )
        except StaffAccountRefused as refusal:
            form.add_error(None, str(refusal))
        else:
            messages.success(request, _("Saved.") if changed else _("Nothing needed changing."))
            return redirect("staff:staff_list")
    # How they sign in, with the actions when this admin may take them (staff.sign_in_views).
    managed = staff_account_managed_by(request.user, account.pk)
    return render(
        request,
        "accounts/staff_form.html",
        {
            "form": form,
            "account": account,
            "sign_in": sign_in_methods(managed or account),
            "manages_sign_in": managed is not None,
        },
    )


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
