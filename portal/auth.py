"""Sign-in: usernames in their normal form, and throttling of repeated failures.

Throttling rules (settings, read on every call):

- LOGIN_FAILURE_LIMIT_PER_USERNAME failed sign-ins for one username within LOGIN_FAILURE_WINDOW
  seconds lock that username for LOGIN_LOCKOUT_DURATION seconds, from any address, whether or
  not an account has that username (so the lock itself reveals nothing);
- LOGIN_FAILURE_LIMIT_PER_IP failures from one client IP within the window lock that IP the
  same way, whatever usernames it tries;
- while locked, no password is checked at all;
- a successful sign-in resets its username's count, never the IP's (else an attacker holding
  one account could clear their own count between guesses).

The counts live in Django's cache: with several processes the cache must be shared (Redis or
the database cache, via CACHE_URL), or each process counts on its own.
"""

import logging

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.debug import sensitive_variables

from portal.addresses import client_address
from portal.usernames import username_normal_form

logger = logging.getLogger(__name__)

_KEY_SALT = "portal.auth.sign-in-throttle"


class CaseInsensitiveModelBackend(ModelBackend):
    """Django's backend, matching the username's normal form ("ＡＭＩＲＡ.Ｋ" = "amira.k").

    (The class keeps its name: sessions record the backend that signed them in by its path.)

    It refuses, without checking the password, a username or an IP that is locked, and
    counts each failure towards the locks.
    """

    def get_user(self, user_id):
        """Load the signed-in user with their Learner and staff role in one query."""
        user = (
            get_user_model()
            ._default_manager.select_related("learner", "staff_profile")
            .filter(pk=user_id)
            .first()
        )
        return user if user is not None and self.user_can_authenticate(user) else None

    @sensitive_variables("password")
    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None or password is None:
            return None
        throttle = SignInThrottle(
            username=username, ip=client_address(request) if request else None
        )
        if throttle.is_locked():
            logger.info(
                "Sign-in refused while locked: username ref %s from %s",
                throttle.username_ref,
                throttle.ip or "an unknown address",
            )
            # Stops authenticate() trying other backends; it returns None.
            raise PermissionDenied
        user = self._check_credentials(request, username, password, **kwargs)
        if user is None:
            throttle.record_failure()
        else:
            throttle.reset_username()
        return user

    async def aauthenticate(self, request, username=None, password=None, **kwargs):
        return await sync_to_async(self.authenticate)(
            request, username=username, password=password, **kwargs
        )

    @sensitive_variables("password")
    def _check_credentials(self, request, username: str, password: str, **kwargs):
        """Return the user these credentials belong to, or None."""
        user = account_for(username)
        if user is None:
            # Spend the time of a password check, so an unknown username answers as slowly.
            get_user_model()().set_password(password)
            return None
        if user.check_password(password) and self.user_can_authenticate(user):
            return user
        return None


def account_for(username: str):
    """Return the account a typed username signs in to, or None."""
    normal = username_normal_form(username)
    names = {normal, username}
    accounts = {
        user.get_username(): user
        for user in get_user_model()._default_manager.filter(username__in=names)
    }
    # A name typed exactly as an account's first: accounts whose normal forms collide keep
    # their old names (learners migration 0008), and each still signs in as it is written.
    return accounts.get(username) or accounts.get(normal)


class SignInThrottle:
    """The failure counts and locks for one username and one client IP."""

    def __init__(self, *, username: str, ip: str | None):
        self.username_ref = _ref(username_normal_form(username))
        self.ip = ip
        self.ip_ref = _ref(ip) if ip else None

    def is_locked(self) -> bool:
        """Return whether the username or the IP is locked out."""
        keys = [f"signin:lock:user:{self.username_ref}"]
        if self.ip_ref:
            keys.append(f"signin:lock:ip:{self.ip_ref}")
        return bool(cache.get_many(keys))

    def record_failure(self) -> None:
        """Count a failed sign-in against the username and the IP; lock them at the limit."""
        self._count("user", self.username_ref, settings.LOGIN_FAILURE_LIMIT_PER_USERNAME)
        if self.ip_ref:
            self._count("ip", self.ip_ref, settings.LOGIN_FAILURE_LIMIT_PER_IP)

    def reset_username(self) -> None:
        """Forget the username's failures and lock (a success, or staff set a new password)."""
        cache.delete_many(
            [f"signin:fail:user:{self.username_ref}", f"signin:lock:user:{self.username_ref}"]
        )

    def _count(self, kind: str, ref: str, limit: int) -> None:
        fail_key = f"signin:fail:{kind}:{ref}"
        # The window starts with the first failure: add() does nothing if it is running.
        cache.add(fail_key, 0, timeout=settings.LOGIN_FAILURE_WINDOW)
        try:
            failures = cache.incr(fail_key)
        except ValueError:  # the window ended between add() and incr()
            cache.set(fail_key, 1, timeout=settings.LOGIN_FAILURE_WINDOW)
            failures = 1
        if failures < limit:
            return
        cache.set(f"signin:lock:{kind}:{ref}", True, timeout=settings.LOGIN_LOCKOUT_DURATION)
        cache.delete(fail_key)  # after the lock, counting starts afresh
        # Never the username itself: people type their password into it by mistake.
        if kind == "user":
            logger.warning(
                "Sign-in locked for username ref %s after %d failures (the last from %s)",
                ref,
                failures,
                self.ip or "an unknown address",
            )
        else:
            logger.warning("Sign-in locked for IP %s after %d failures", self.ip, failures)


def sign_in_locked(*, username: str, request: HttpRequest | None) -> bool:
    """Return whether sign-in for this username, or from this request's IP, is locked."""
    ip = client_address(request) if request is not None else None
    return SignInThrottle(username=username, ip=ip).is_locked()


def sign_in_unlock(*, username: str) -> None:
    """Lift a username's lock and forget its failures (its IP's stay)."""
    SignInThrottle(username=username, ip=None).reset_username()


def too_many_attempts_message() -> str:
    """Say that sign-in is locked and for how long, the same for every username."""
    # Translators: %(duration)s is a duration such as "15 minutes" or "8 hours".
    return _("Too many attempts. Try again in %(duration)s.") % {
        "duration": duration_text(settings.LOGIN_LOCKOUT_DURATION)
    }


def duration_text(seconds: int) -> str:
    """Say a duration in whole hours or minutes ("15 minutes", "8 hours")."""
    if seconds >= 3600 and seconds % 3600 == 0:
        hours = seconds // 3600
        return ngettext("%(count)d hour", "%(count)d hours", hours) % {"count": hours}
    minutes = max(1, round(seconds / 60))
    return ngettext("%(count)d minute", "%(count)d minutes", minutes) % {"count": minutes}


def _ref(value: str) -> str:
    """Return a keyed hash of a username or IP: a cache key and a log reference."""
    return salted_hmac(_KEY_SALT, value, algorithm="sha256").hexdigest()[:32]
