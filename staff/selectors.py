"""Reads for the staff pages about sign-in: locks, and the accounts an admin manages."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from accounts.access import is_partner_admin, is_trust_admin, working_school_ids
from accounts.models import TRUST_ROLES, SignInLock
from accounts.selectors import staff_accounts
from learners.access import visible_learners


def sign_in_locks_of(user: AbstractBaseUser, locks: QuerySet[SignInLock] | None = None):
    """Return the locks (of `locks`, else all) the user may see and lift.

    Partner admins see every lock: staff accounts' and addresses' too. Everyone else sees the
    locks on the learners they see (a teacher, their groups' pupils), and every device's card
    lock: it names nobody, and the teacher beside a locked classroom tablet must be able to
    open it.
    """
    locks = SignInLock.objects.all() if locks is None else locks
    schools = working_school_ids(user)
    if is_partner_admin(user):
        if schools is None:
            return locks
        # A school's admins: their school's locks; a lock on an address alone (it names no
        # school) is the trust admins' to see.
        # (A device's card lock names nobody: every school's admins may open it.)
        return locks.filter(
            Q(school_id__in=schools) | Q(kind=SignInLock.Kind.CARD_DEVICE, school_id__isnull=True)
        )
    device_locks = Q(kind=SignInLock.Kind.CARD_DEVICE)
    if schools is not None:
        device_locks &= Q(school_id__in=schools) | Q(school_id__isnull=True)
    return locks.filter(Q(user__learner__in=visible_learners(user)) | device_locks)


def sign_in_locks_current(user: AbstractBaseUser) -> list[SignInLock]:
    """Return the locks in force the user sees, ending soonest first, with account and learner."""
    return list(
        sign_in_locks_of(user, SignInLock.objects.current())
        .select_related("user__learner")
        .order_by("locked_until", "id")
    )


def staff_account_managed_by(actor: AbstractBaseUser, pk: int) -> AbstractBaseUser | None:
    """Return the staff account (active or not) whose sign-in the admin may manage, else None.

    The staff edit page's rule: one school's admins manage the staff of the school they work
    in; a trust role's account is the trust admins' (a superuser's, the superusers').
    """
    trust_admin = is_trust_admin(actor)
    schools = None if trust_admin else working_school_ids(actor)
    account = (
        staff_accounts(include_inactive=True, school_ids=schools)
        .select_related("staff_profile")
        .prefetch_related("socialaccount_set", "authenticator_set", "school_roles")
        .filter(pk=pk)
        .first()
    )
    if account is None:
        return None
    if account.is_superuser and not actor.is_superuser:
        return None
    profile = getattr(account, "staff_profile", None)
    # Read from the profile, not trust_role(): that says None for an inactive account.
    if profile is not None and profile.role in TRUST_ROLES and not trust_admin:
        return None
    return account
