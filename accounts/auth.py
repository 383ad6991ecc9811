"""Sign-in: the backend that finds an account by its username's normal form, throttled.

Every attempt goes through accounts.sign_in_throttle before its password is checked; see there
for the limits and why they are counted first.
"""

import logging

from allauth.mfa.models import Authenticator
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied
from django.db.models import prefetch_related_objects
from django.views.decorators.debug import sensitive_variables

from accounts.sign_in_throttle import THROTTLED, SignInThrottle, sign_in_input_too_long
from accounts.user_cache import cached_user
from accounts.usernames import username_normal_form
from kit.addresses import client_address

logger = logging.getLogger(__name__)


class CaseInsensitiveModelBackend(ModelBackend):
    """Django's backend, matching the username's normal form ("ＡＭＩＲＡ.Ｋ" = "amira.k").

    (The class keeps its name: sessions record the backend that signed them in by its path.)

    Each attempt is counted before its password is checked (SignInThrottle); one over a limit,
    or locked, is refused unchecked.
    """

    def get_user(self, user_id):
        """Load the signed-in user with their Learner and staff role (cached, accounts.user_cache).

        is_active is checked here on every request, and the session's auth hash and the
        learner's status after, on the cached copy as on a fresh one.
        """
        user = cached_user(user_id, _load_user)
        return user if user is not None and self.user_can_authenticate(user) else None

    @sensitive_variables("password")
    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None or password is None:
            return None
        throttle = SignInThrottle(
            username=username, ip=client_address(request) if request else None
        )
        if not throttle.reserve():
            logger.info(
                "Sign-in refused while locked: username ref %s from %s",
                throttle.username_ref,
                throttle.ip or "an unknown address",
            )
            if request is not None:
                setattr(request, THROTTLED, True)  # the sign-in form says why (portal.forms)
            # Stops authenticate() trying other backends; it returns None.
            raise PermissionDenied
        if sign_in_input_too_long(username=throttle.username, password=password):
            # A failure like any other, but no account can match it: the database never sees
            # it (SQLite failed on a 100,000-character username, uncounted).
            throttle.fail()
            return None
        try:
            account = account_for(username)
            user = self._check_password(account, password)
        except Exception:
            # The portal failed (its database, say), not the person: a school signing in
            # through an outage must not be locked out by it afterwards.
            throttle.give_back()
            raise
        if user is None:
            throttle.fail(account=account)
        elif gives_a_second_factor_next(user):
            # The password is right, but the code is still to come: give this attempt back
            # and keep the account's earlier failures, so that signing in again between wrong
            # codes never clears their count (the code's success does: signin.forms).
            throttle.give_back()
        else:
            throttle.succeed()
        return user

    async def aauthenticate(self, request, username=None, password=None, **kwargs):
        return await sync_to_async(self.authenticate)(
            request, username=username, password=password, **kwargs
        )

    @sensitive_variables("password")
    def _check_password(self, account, password: str):
        """Return the account if the password is its own and it may sign in, else None."""
        if account is None:
            # Spend the time of a password check, so an unknown username answers as slowly.
            get_user_model()().set_password(password)
            return None
        if account.check_password(password) and self.user_can_authenticate(account):
            return account
        return None


def _load_user(user_id):
    """Load a user with their Learner and staff profile (and staff's school roles); None if none."""
    user = (
        get_user_model()
        ._default_manager.select_related("learner", "staff_profile")
        .filter(pk=user_id)
        .first()
    )
    if user is not None and getattr(user, "learner", None) is None:
        # A member of staff's roles by school, kept with the cached copy (a learner has none).
        prefetch_related_objects([user], "school_roles")
    return user


def gives_a_second_factor_next(user) -> bool:
    """Return whether a member of staff has an authenticator app or passkey to give after this."""
    if getattr(user, "learner", None) is not None:
        return False
    return Authenticator.objects.filter(
        user_id=user.pk, type__in=(Authenticator.Type.TOTP, Authenticator.Type.WEBAUTHN)
    ).exists()


def account_for(username: str):
    """Return the account a typed username signs in to, or None."""
    normal = username_normal_form(username)
    names = {normal, username}
    accounts = {
        user.get_username(): user
        # With its Learner: whether a second factor follows is asked of staff only.
        for user in get_user_model()
        ._default_manager.select_related("learner")
        .filter(username__in=names)
    }
    # A name typed exactly as an account's first: accounts whose normal forms collide keep
    # their old names (learners migration 0009), and each still signs in as it is written.
    return accounts.get(username) or accounts.get(normal)
