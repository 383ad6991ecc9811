"""Staff pages about sign-in: the locks in force, and lifting one."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts import services
from accounts.access import learner_account, staff_required
from accounts.models import SignInLock
from kit.addresses import client_address
from staff.selectors import sign_in_locks_current, sign_in_locks_of


@staff_required
def sign_in_locks(request: HttpRequest) -> HttpResponse:
    """List the sign-in locks in force, each with a button to lift it."""
    locks = sign_in_locks_current(request.user)
    for lock in locks:
        lock.who = lock_who(lock)
    return render(request, "accounts/sign_in_locks.html", {"locks": locks})


@staff_required
@require_POST  # inside: a GET is refused before any lookup, so it reveals nothing
def sign_in_lock_lift(request: HttpRequest, pk: int) -> HttpResponse:
    """Lift one sign-in lock, then show the locks again with what happened."""
    # Another group's learner's lock is a 404, as their record is.
    lock = get_object_or_404(
        sign_in_locks_of(request.user, SignInLock.objects.select_related("user__learner")), pk=pk
    )
    if services.sign_in_lock_lift(lock=lock, actor=request.user, address=client_address(request)):
        messages.success(request, lifted_message(lock))
    else:
        messages.info(request, _("That lock had already ended or been lifted."))
    return redirect("staff:sign_in_locks")


def lock_who(lock: SignInLock) -> str:
    """Name whom a lock keeps out: the learner's name, a staff username, a device, an address."""
    if lock.kind == SignInLock.Kind.CARD_DEVICE:
        if not lock.address:
            return lock.device
        # Translators: a device at an address, e.g. "Safari on an iPad at 203.0.113.5".
        return _("%(device)s at %(address)s") % {"device": lock.device, "address": lock.address}
    if lock.user is None:
        return lock.address or ""
    learner = learner_account(lock.user)
    return learner.display_name if learner is not None else lock.user.get_username()


def lifted_message(lock: SignInLock) -> str:
    """Say which lock was lifted: others on the same account may still hold (they are listed)."""
    if lock.kind == SignInLock.Kind.ADDRESS:
        return _("Sign-in from %(address)s is open again.") % {"address": lock.address}
    if lock.kind == SignInLock.Kind.CARD:
        return _("The lock on the sign-in card of %(who)s is lifted.") % {"who": lock_who(lock)}
    if lock.kind == SignInLock.Kind.CARD_DEVICE:
        return _("Card sign-in on %(who)s is open again.") % {"who": lock_who(lock)}
    if lock.kind == SignInLock.Kind.CARD_ADDRESS:
        return _("Card sign-in from %(address)s is open again.") % {"address": lock.address}
    if lock.kind == SignInLock.Kind.ACCOUNT_ADDRESS:
        return _("The lock on %(who)s from %(address)s is lifted.") % {
            "who": lock_who(lock),
            "address": lock.address,
        }
    return _("The lock on %(who)s from every address is lifted.") % {"who": lock_who(lock)}
