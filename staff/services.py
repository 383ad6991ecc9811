"""Staff accounts: adding them, changing their role and groups, and the partner's settings."""

from collections.abc import Iterable
from datetime import time

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction
from django.views.decorators.debug import sensitive_variables

from accounts.access import SAFEGUARDING_ROLES, STAFF_GROUP, is_trust_admin
from accounts.models import SchoolRole, StaffProfile, StaffRole
from accounts.services import staff_role_set
from accounts.signals import safeguarding_role_granted
from audit.models import AuditEvent
from audit.services import audit_record
from classes.models import GroupStaff, SchoolGroup
from schools.context import working_school_id
from schools.models import PartnerSettings
from signin.services import email_change_unlinks, sign_in_identities_unlink

Action = AuditEvent.Action


class StaffAccountRefused(Exception):
    """A change that would break an account or lock the partner out, said in words."""


def _refuse_archived(groups: Iterable[SchoolGroup]) -> None:
    """Refuse to make anyone work with last year's archived class."""
    archived = sorted(group.name for group in groups if group.archived_at is not None)
    if archived:
        raise StaffAccountRefused(
            f"{', '.join(archived)}: last year's class, archived and read-only; nobody starts "
            "working with it now."
        )


def _as_json(value: object) -> object:
    """Return a settings value as the audit trail's JSON can hold it."""
    return value.isoformat(timespec="minutes") if isinstance(value, time) else value


@sensitive_variables("password")
@transaction.atomic
def staff_add(
    *,
    username: str,
    email: str,
    role: str,
    password: str | None,
    groups: Iterable[SchoolGroup] = (),
    first_name: str = "",
    last_name: str = "",
    school_ids: Iterable[int] = (),
    added_by: AbstractBaseUser | None,
    address: str | None,
) -> AbstractBaseUser:
    """Create a staff account with its role and groups (no usable password if None).

    The role is held in each of `school_ids` (else the school worked in); a trust role above.
    """
    user = get_user_model().objects.create_user(
        username, email=email, password=password, first_name=first_name, last_name=last_name
    )
    user.groups.add(Group.objects.get_or_create(name=STAFF_GROUP)[0])
    for school_id in list(school_ids) or [None]:
        staff_role_set(user=user, role=role, school_id=school_id)
    groups = list(groups)
    _refuse_archived(groups)
    GroupStaff.objects.bulk_create(GroupStaff(group=group, user=user) for group in groups)
    audit_record(
        actor=added_by,
        address=address,
        action=Action.STAFF_ADDED,
        account=user.get_username(),
        role=role,
        groups=sorted(group.name for group in groups),
    )
    _tell_if_safeguarding_granted(user=user, role=role, before=None, granted_by=added_by)
    return user


def _tell_if_safeguarding_granted(
    *,
    user: AbstractBaseUser,
    role: str,
    before: str | None,
    granted_by: AbstractBaseUser | None,
    email_changed: bool = False,
) -> None:
    """Send `safeguarding_role_granted` when the account has just become a safeguarding lead.

    A lead's new email address counts too: the test alert shows whether it works.
    """
    if role in SAFEGUARDING_ROLES and (before not in SAFEGUARDING_ROLES or email_changed):
        safeguarding_role_granted.send(
            sender=StaffProfile, user=user, role=role, granted_by=granted_by
        )


@transaction.atomic
def staff_change(
    *,
    user: AbstractBaseUser,
    role: str,
    groups: Iterable[SchoolGroup],
    email: str,
    is_active: bool,
    school_id: int | None = None,
    changed_by: AbstractBaseUser | None,
    address: str | None,
) -> list[str]:
    """Change a staff account's role, groups, email or access; return what changed (audited)."""
    if user.is_superuser:
        raise StaffAccountRefused(
            "A superuser is a partner admin by definition: change it in the Django admin."
        )
    demoting_self = role != StaffRole.ADMIN or not is_active
    if changed_by is not None and user.pk == changed_by.pk and demoting_self:
        # Else the last admin could leave the partner with nobody to manage accounts.
        raise StaffAccountRefused(
            "You cannot take away your own admin role or access: ask another admin."
        )
    elsewhere = SchoolRole.objects.filter(user=user).exclude(school_id=school_id).exists()
    account_wide = user.email != email or user.is_active != is_active
    if elsewhere and account_wide and not (changed_by is None or is_trust_admin(changed_by)):
        # The address and the access serve every school they work in (another school's
        # alerts go to that address): the trust's admins change them, not one school's.
        raise StaffAccountRefused(
            "This member of staff also works in another school: ask a trust admin to change "
            "their email address or whether they can sign in."
        )
    groups = list(groups)
    linked = set(GroupStaff.objects.filter(user=user).values_list("group_id", flat=True))
    _refuse_archived(group for group in groups if group.pk not in linked)
    changes: dict[str, object] = {}
    role_before = staff_role_set(user=user, role=role, school_id=school_id)
    if role_before != role:
        changes["role"] = role
    if user.email != email:
        changes["email"] = "changed"  # the address itself stays out of the trail
        # School identities link by email: one linked under the old address must not keep
        # signing in to the account now that the address is another.
        if email_change_unlinks(user.email, email) and sign_in_identities_unlink(user.pk):
            changes["school_identity_unlinked"] = True
        user.email = email
    if user.is_active != is_active:
        changes["active"] = is_active
        user.is_active = is_active
    user.save(update_fields=["email", "is_active"])
    user.groups.add(Group.objects.get_or_create(name=STAFF_GROUP)[0])
    # Archived groups are history: links to them stay as they were (refused above if new).
    links = GroupStaff.objects.filter(user=user, group__archived_at__isnull=True)
    wanted = {group.pk: group for group in groups if group.archived_at is None}
    school = school_id or working_school_id()
    if school is not None:
        # Only the groups of the school worked in: their classes elsewhere stay.
        links = links.filter(group__school_id=school)
    current = set(links.values_list("group_id", flat=True))
    if wanted.keys() != current:
        GroupStaff.objects.filter(user=user, group_id__in=current - wanted.keys()).delete()
        GroupStaff.objects.bulk_create(
            GroupStaff(group=wanted[pk], user=user) for pk in wanted.keys() - current
        )
        changes["groups"] = sorted(group.name for group in wanted.values())
    if changes:
        audit_record(
            actor=changed_by,
            address=address,
            action=Action.STAFF_CHANGED,
            account=user.get_username(),
            **changes,
        )
    if user.is_active:
        _tell_if_safeguarding_granted(
            user=user,
            role=role,
            before=role_before,
            granted_by=changed_by,
            email_changed="email" in changes,
        )
    return list(changes)


@sensitive_variables("password")
@transaction.atomic
def staff_password_set(
    *,
    user: AbstractBaseUser,
    password: str,
    changed_by: AbstractBaseUser | None,
    address: str | None,
) -> None:
    """Give a staff account a new password (audited, without the password)."""
    user.set_password(password)
    user.save(update_fields=["password"])
    audit_record(
        actor=changed_by,
        address=address,
        action=Action.STAFF_CHANGED,
        account=user.get_username(),
        new_password=True,
    )


@transaction.atomic
def partner_settings_update(
    *,
    changed_by: AbstractBaseUser | None,
    address: str | None,
    **values: object,
) -> list[str]:
    """Change the partner's settings (fields of PartnerSettings); return what changed (audited)."""
    current = PartnerSettings.objects.select_for_update().get(pk=PartnerSettings.current().pk)
    changes = {field: value for field, value in values.items() if getattr(current, field) != value}
    if changes:
        for field, value in changes.items():
            setattr(current, field, value)
        current.save()
        audit_record(
            actor=changed_by,
            address=address,
            action=Action.SETTINGS_CHANGED,
            # Times of day (the school day) as text: the trail holds JSON.
            **{field: _as_json(value) for field, value in changes.items()},
        )
    return list(changes)


@transaction.atomic
def staff_trust_role_drop(
    *, user: AbstractBaseUser, changed_by: AbstractBaseUser | None, address: str | None
) -> str | None:
    """End an account's trust role (its roles in schools stay); return it, None if it had none."""
    profile = StaffProfile.objects.select_for_update().filter(user=user).first()
    if profile is None or not profile.role:
        return None
    dropped = profile.role
    profile.role = ""
    profile.save(update_fields=["role"])
    # The account's loaded profile too: what it may do is read from it for the rest of the run.
    if hasattr(user, "staff_profile"):
        user.staff_profile.role = ""
    audit_record(
        actor=changed_by,
        address=address,
        action=Action.STAFF_CHANGED,
        account=user.get_username(),
        trust_role_ended=dropped,
    )
    return dropped
