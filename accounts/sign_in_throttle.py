"""Throttling of repeated sign-in failures, and the locks it sets.

Failed sign-ins are counted in three scopes, each over LOGIN_FAILURE_WINDOW seconds; a scope
that reaches its limit is locked for LOGIN_LOCKOUT_DURATION seconds (settings, read on every
call):

- one account from one address: LOGIN_FAILURE_LIMIT_PER_USERNAME;
- one account from every address: LOGIN_FAILURE_LIMIT_PER_ACCOUNT, so guesses spread over many
  addresses stop too;
- one address, whatever the usernames: LOGIN_FAILURE_LIMIT_PER_IP. A school is one address
  (NAT): this limit is high enough for a class's typos, and correct sign-ins never use it up.

An account is a username's normal form, whether or not an account has it, so the answers and
the locks reveal nothing.

Each attempt is a reservation. Before any password is checked the attempt is counted in all
three scopes (cache add, then incr: atomic in the local-memory cache and in Redis); if a count
passes its limit, or a scope is locked, it is refused without a check and gives its counts
back. So of simultaneous attempts at most the limit are checked: checking the lock first and
counting the failure after, as two steps, let 40 simultaneous guesses all be checked.
django-axes works in those two steps too (it reads the lock before authenticating and records
the failure after), hence this module. A failure keeps its reservation as the counted failure,
and the failure that reaches a limit sets the lock. A success gives its address's reservation
back and clears the account's counts; never the address's failures, else an attacker holding
one account could clear their own count between guesses.

The counts live in Django's cache: with several processes the cache must be shared and its incr
atomic, which Redis is (CACHE_URL=redis://...). The database cache reads then writes, so
simultaneous attempts may slip past a limit there. Each lock on an account or an address is
also kept as a SignInLock row, for staff to see and lift (the accounts app); the cache alone
decides who is refused.
"""

import contextlib
import logging
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.validators import validate_ipv46_address
from django.http import HttpRequest
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from accounts.access import learner_account, trust_role, working_school
from accounts.models import SignInLock
from accounts.signals import sign_in_lock_set
from accounts.usernames import USERNAME_MAX_LENGTH, username_normal_form
from kit.addresses import client_address

logger = logging.getLogger(__name__)

_KEY_SALT = "portal.auth.sign-in-throttle"  # kept from when this lived in accounts.auth
# No password set through the portal is longer; a longer one is a failure, never hashed.
PASSWORD_MAX_LENGTH = 4096


# Set on a request whose sign-in was refused unchecked, so that the form can say why.
THROTTLED = "sign_in_throttled"


@dataclass(frozen=True)
class Scope:
    """One count of failed sign-ins: its kind, cache key part, and the setting of its limit."""

    kind: str
    ref: str
    limit_setting: str

    @property
    def limit(self) -> int:
        return getattr(settings, self.limit_setting)

    @property
    def scope_ref(self) -> str:
        """Return what names this scope in the cache (and on its SignInLock rows)."""
        return f"{self.kind}:{self.ref}"

    @property
    def count_key(self) -> str:
        return _count_key(self.scope_ref)

    @property
    def lock_key(self) -> str:
        return _lock_key(self.scope_ref)


class SignInThrottle:
    """The failure counts and locks of one sign-in attempt: its account, address, and both."""

    def __init__(self, *, username: str, ip: str | None):
        self.username = username_normal_form(username)
        self.username_ref = _ref(self.username)
        self.ip = ip
        self.ip_ref = _ref(ip) if ip else None
        self.scopes = [Scope(ACCOUNT, self.username_ref, "LOGIN_FAILURE_LIMIT_PER_ACCOUNT")]
        if self.ip_ref:
            # A staff unlock (sign_in_unlock) moves the account to a new generation: its
            # counts and locks from every address are then left behind at once.
            generation = cache.get(_generation_key(self.username_ref), "0")
            self.scopes += [
                Scope(
                    ACCOUNT_ADDRESS,
                    f"{self.username_ref}.{generation}:{self.ip_ref}",
                    "LOGIN_FAILURE_LIMIT_PER_USERNAME",
                ),
                Scope(ADDRESS, self.ip_ref, "LOGIN_FAILURE_LIMIT_PER_IP"),
            ]
        self.reserved: dict[str, int] = {}

    def is_locked(self) -> bool:
        """Return whether the account, the address, or the account from the address is locked."""
        return bool(cache.get_many([scope.lock_key for scope in self.scopes]))

    def reserve(self) -> bool:
        """Count this attempt in every scope before its password is checked; False if refused.

        A refused attempt gives back what it counted: it checked no password.
        """
        if self.is_locked():
            return False
        counts = {
            scope.kind: count_up(scope.count_key, window=settings.LOGIN_FAILURE_WINDOW)
            for scope in self.scopes
        }
        if any(counts[scope.kind] > scope.limit for scope in self.scopes):
            self.give_back()
            return False
        self.reserved = counts
        return True

    def give_back(self) -> None:
        """Take back what this attempt counted: no password was checked, or none could be."""
        for scope in self.scopes:
            _count_down(scope.count_key)

    def fail(self, *, account: AbstractBaseUser | None = None) -> None:
        """Keep the reservation as a failure; lock each scope whose limit it reached.

        `account` is the account the username names, if any: its locks are recorded for staff.
        """
        for scope in self.scopes:
            failures = self.reserved.get(scope.kind, 0)
            if failures >= scope.limit:
                self._lock(scope, failures)
                self._record_lock(scope, account)

    def succeed(self) -> None:
        """Clear the account's counts, and give the address back the attempt's reservation."""
        cache.delete_many(
            [scope.count_key for scope in self.scopes if scope.kind in (ACCOUNT, ACCOUNT_ADDRESS)]
        )
        for scope in self.scopes:
            if scope.kind == ADDRESS:
                _count_down(scope.count_key)

    def _lock(self, scope: Scope, failures: int) -> None:
        cache.set(scope.lock_key, True, timeout=settings.LOGIN_LOCKOUT_DURATION)
        # The count ends with the lock, so that counting starts afresh after it (and attempts
        # refused meanwhile still give back what they counted).
        cache.touch(scope.count_key, timeout=settings.LOGIN_LOCKOUT_DURATION)
        sign_in_lock_set.send(sender=SignInThrottle, scope=scope.kind)
        # Never the username itself: people type their password into it by mistake.
        if scope.kind == ACCOUNT:
            logger.warning(
                "Sign-in locked for username ref %s after %d failures (the last from %s)",
                self.username_ref,
                failures,
                self.ip or "an unknown address",
            )
        elif scope.kind == ACCOUNT_ADDRESS:
            logger.warning(
                "Sign-in locked for username ref %s from %s after %d failures",
                self.username_ref,
                self.ip,
                failures,
            )
        else:
            logger.warning("Sign-in locked for IP %s after %d failures", self.ip, failures)

    def _record_lock(self, scope: Scope, account: AbstractBaseUser | None) -> None:
        """Keep a row of the lock for staff: on an account, or on an address."""
        if scope.kind != ADDRESS and account is None:
            return  # no account has this username: nobody for staff to let back in
        address = None if scope.kind == ACCOUNT else valid_address(self.ip)
        if scope.kind != ACCOUNT and address is None:
            return  # an address the database could not hold; the cache still locks it
        sign_in_lock_record(scope, user=None if scope.kind == ADDRESS else account, address=address)


# The kinds of scope, in cache keys and on SignInLock rows.
ACCOUNT = SignInLock.Kind.ACCOUNT.value
ACCOUNT_ADDRESS = SignInLock.Kind.ACCOUNT_ADDRESS.value
ADDRESS = SignInLock.Kind.ADDRESS.value


def _count_key(scope_ref: str) -> str:
    return f"signin:fail:{scope_ref}"


def _lock_key(scope_ref: str) -> str:
    return f"signin:lock:{scope_ref}"


def lock_school(user: AbstractBaseUser | None) -> int | None:
    """Return the school of a locked account: a learner's own, a member of staff's first."""
    if user is None:
        return None  # a lock on an address alone concerns no one school
    learner = learner_account(user)
    if learner is not None:
        return learner.school_id
    if trust_role(user) is not None:
        return None  # above the schools: the trust admins' to see and lift
    return working_school(user)


def sign_in_lock_record(
    scope: Scope,
    *,
    user: AbstractBaseUser | None = None,
    address: str | None = None,
    device: str = "",
) -> None:
    """Keep a row of a scope's lock for staff, until LOGIN_LOCKOUT_DURATION from now."""
    until = timezone.now() + timedelta(seconds=settings.LOGIN_LOCKOUT_DURATION)
    # Locked again before the lock ended (a lift undone by the same guesses): one row.
    renewed = SignInLock.objects.current().filter(scope_ref=scope.scope_ref)
    if not renewed.update(locked_until=until):
        SignInLock.objects.create(
            kind=scope.kind,
            school_id=lock_school(user),
            user=user,
            address=address,
            device=device[:80],
            scope_ref=scope.scope_ref,
            locked_until=until,
        )


def valid_address(ip: str | None) -> str | None:
    """Return the IP address if it is one (a trusted proxy header may hold anything)."""
    try:
        validate_ipv46_address(ip)
    except ValidationError:
        return None
    return ip


def count_up(key: str, *, window: int) -> int:
    """Add one to a count in the cache that lasts `window` seconds, atomically; return it."""
    # The window starts with the first count: add() does nothing if it is running.
    cache.add(key, 0, timeout=window)
    try:
        return cache.incr(key)
    except ValueError:  # the window ended between add() and incr(): start the next one
        if cache.add(key, 1, timeout=window):
            return 1
        return cache.incr(key)


def _count_down(key: str) -> None:
    """Take one from a count in the cache, unless the count has ended meanwhile."""
    with contextlib.suppress(ValueError):
        cache.decr(key)


def _generation_key(username_ref: str) -> str:
    return f"signin:generation:{username_ref}"


def sign_in_input_too_long(*, username: str, password: str) -> bool:
    """Return whether a username (in normal form) or password is longer than any can be."""
    return len(username) > USERNAME_MAX_LENGTH or len(password) > PASSWORD_MAX_LENGTH


def sign_in_locked(*, username: str, request: HttpRequest | None) -> bool:
    """Return whether sign-in for this username, from this request's address, is locked."""
    if request is not None and getattr(request, THROTTLED, False):
        return True
    ip = client_address(request) if request is not None else None
    return SignInThrottle(username=username, ip=ip).is_locked()


def sign_in_unlock(*, user: AbstractBaseUser, lifted_by: AbstractBaseUser | None = None) -> None:
    """Lift an account's locks and forget its failures, from every address (not the addresses')."""
    throttle = SignInThrottle(username=user.get_username(), ip=None)
    account = throttle.scopes[0]
    cache.delete_many([account.count_key, account.lock_key])
    # Its counts from each address are left behind with the old generation, and expire.
    longest = max(settings.LOGIN_FAILURE_WINDOW, settings.LOGIN_LOCKOUT_DURATION)
    cache.set(_generation_key(throttle.username_ref), secrets.token_hex(8), timeout=longest)
    # Its sign-in card's locks are the card's (lessons.card_throttle): a password reset keeps them.
    SignInLock.objects.current().filter(user=user, kind__in=[ACCOUNT, ACCOUNT_ADDRESS]).update(
        lifted_at=timezone.now(), lifted_by=lifted_by
    )


def sign_in_lock_clear(lock: SignInLock) -> None:
    """Delete the throttle's lock and count of a locked scope: sign-in is open to it again."""
    cache.delete_many([_count_key(lock.scope_ref), _lock_key(lock.scope_ref)])


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
