"""Reads for the staff pages about sign-in."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from accounts.access import is_partner_admin, working_school_ids
from accounts.models import SignInLock
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
