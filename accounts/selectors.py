"""Reads for the staff pages about sign-in."""

from portal.models import SignInLock


def sign_in_locks_current() -> list[SignInLock]:
    """Return the sign-in locks in force, ending soonest first, with their account and learner."""
    return list(
        SignInLock.objects.current().select_related("user__learner").order_by("locked_until", "id")
    )
