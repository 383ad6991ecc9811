"""Refused sign-in cards, counted per device, per card and per address, and the locks they set.

A school is one address (NAT): a class of six-year-olds mistyping, or one pupil mashing keys,
must never stop the other cards there. So a refused card is counted, over LOGIN_FAILURE_WINDOW
seconds, in each scope it has, and a scope at its limit is locked for LOGIN_LOCKOUT_DURATION:

- the device, by the signed cookie the card page gives every browser (`card_device`):
  CARD_REFUSAL_LIMIT_PER_DEVICE, counting codes that name no card (and a locked card's). A
  locked device is refused every card, valid or not.
- the card, when the code or QR secret names a current card (refused because no window of its
  pupil's is open, the address is outside the school's networks, or it is live on another
  device): CARD_REFUSAL_LIMIT_PER_CARD. A locked card is refused on every device. A card is
  found by the digest of its whole code or secret, so a code that names no card has no card to
  count against: only its device and address.
- the address: CARD_REFUSAL_LIMIT_PER_IP, in the thousands. Its lock refuses only attempts
  that carry no device cookie. Every browser that opened the card page has one, so a valid card
  is refused only when that card or that device is locked, never for its address alone; what
  the address lock stops is the script that drops cookies to escape the device count. (A lock
  refusing only codes that name no card would change nothing: those are refused anyway. One
  refusing devices that never signed in would stop a pupil on a new tablet.)

A script that keeps its cookies is held to the device limit per cookie, and each new cookie
costs it a visit to the card page (cookies are signed, so it cannot make its own); an address
is given at most CARD_NEW_DEVICES_PER_IP new cookies a window, and then falls under its
address limit. That stops
no determined guesser by itself; what does is the code: 10 symbols of 21 (44 bits), working
only in an open lesson window and, when the partner lists them, from the school's networks.
At a thousand guesses a second for a day, with a thousand windows open all day, the chance of
finding one card is under one in a hundred.

A sign-in with a card clears its card's and its device's counts (a shared tablet passed
along a class stays usable), never the address's: an attacker with one card of their own could
otherwise wipe the count between guesses. An attempt refused by its device's or address's lock
looks no card up and counts nowhere; one refused by its card's lock counts, as any refused card
does, against its device and address, not again against the card.

Each lock is kept as a SignInLock row for staff, who lift it on /sign-in-locks/
(accounts.services.sign_in_lock_lift clears its count and lock here too: the keys are
accounts.sign_in_throttle's own). A card's lock looks like any refusal to the person holding
the card (so it tells no one a code is real); a device's or an address's says that many cards
have been tried.
"""

import logging
import secrets
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.utils.crypto import salted_hmac

from accounts.models import SignInLock
from accounts.sign_in_throttle import Scope, count_up, sign_in_lock_record, valid_address
from accounts.signals import sign_in_lock_set
from lessons.models import SignInCard

logger = logging.getLogger(__name__)

# The device cookie: a random id, signed so that only the card page can make one.
DEVICE_COOKIE = "card_device"
DEVICE_COOKIE_SALT = "lessons.card-device"
DEVICE_COOKIE_MAX_AGE = 365 * 24 * 3600  # a year: a school's device keeps its record
_REF_SALT = "lessons.card-refusals"

CARD = SignInLock.Kind.CARD.value
DEVICE = SignInLock.Kind.CARD_DEVICE.value
ADDRESS = SignInLock.Kind.CARD_ADDRESS.value


@dataclass(frozen=True)
class CardAttempt:
    """Where a card is tried: the address, the device cookie's id (None: none), the device."""

    address: str | None
    device_id: str | None
    device: str = ""

    def device_scope(self) -> Scope | None:
        if not self.device_id:
            return None
        return Scope(DEVICE, _ref(self.device_id), "CARD_REFUSAL_LIMIT_PER_DEVICE")

    def address_scope(self) -> Scope:
        return Scope(ADDRESS, _ref(self.address or "unknown"), "CARD_REFUSAL_LIMIT_PER_IP")


def card_scope(card: SignInCard) -> Scope:
    """Return the scope counting a card's refusals (a reissued card is a new one, unlocked)."""
    return Scope(CARD, str(card.pk), "CARD_REFUSAL_LIMIT_PER_CARD")


def device_id_new() -> str:
    """Return a new device id for the card page's cookie."""
    return secrets.token_urlsafe(16)


def attempt_locked(attempt: CardAttempt) -> bool:
    """Return whether the device is locked, or the address is and the attempt has no device."""
    scope = attempt.device_scope() or attempt.address_scope()
    return bool(cache.get(scope.lock_key))


def card_locked(card: SignInCard) -> bool:
    """Return whether a card is locked, on every device."""
    return bool(cache.get(card_scope(card).lock_key))


def card_refusal_count(attempt: CardAttempt, card: SignInCard | None = None) -> None:
    """Count a refused card in each of its scopes; lock each that reaches its limit.

    `card` is the current card the code named, if any, and not itself locked: its refusal
    (no window open yet, outside the school's networks, live on another device) counts
    against the card and the address, never the device, so a class scanning a shared tablet
    before the lesson opens cannot lock the tablet. Without a card (a code that names none, or
    a locked card's), the device and the address count it.
    """
    if card is not None:
        scopes = [attempt.address_scope(), card_scope(card)]
    else:
        scopes = [attempt.address_scope(), attempt.device_scope()]
    for scope in filter(None, scopes):
        count = count_up(scope.count_key, window=settings.LOGIN_FAILURE_WINDOW)
        # Device-carrying refusals still count while the address is locked: lock it once.
        if count >= scope.limit and not cache.get(scope.lock_key):
            _lock(scope, count, attempt, card)


def device_cookie_may_be_given(address: str | None) -> bool:
    """Count a new device cookie given at an address; False past CARD_NEW_DEVICES_PER_IP.

    Each cookie is a device's allowance of refusals: a script fetching a fresh one between
    batches of guesses would otherwise escape every limit. Past this many new devices in a
    window, an address's new browsers get none and fall under its address limit.
    """
    scope = Scope("card_new_device", _ref(address or "unknown"), "CARD_NEW_DEVICES_PER_IP")
    return count_up(scope.count_key, window=settings.LOGIN_FAILURE_WINDOW) <= scope.limit


def card_refusals_forget(attempt: CardAttempt, card: SignInCard) -> None:
    """Clear the card's and the device's counts after the card signed its pupil in."""
    scopes = [card_scope(card), attempt.device_scope()]
    cache.delete_many([scope.count_key for scope in scopes if scope is not None])


def _lock(scope: Scope, count: int, attempt: CardAttempt, card: SignInCard | None) -> None:
    cache.set(scope.lock_key, True, timeout=settings.LOGIN_LOCKOUT_DURATION)
    # The count ends with the lock, so that counting starts afresh after it.
    cache.touch(scope.count_key, timeout=settings.LOGIN_LOCKOUT_DURATION)
    sign_in_lock_set.send(sender=CardAttempt, scope=scope.kind)
    address = valid_address(attempt.address)
    if scope.kind == CARD:
        logger.warning(
            "Sign-in card %s of learner %s locked after %d refusals (the last from %s)",
            card.pk,
            card.learner_id,
            count,
            attempt.address or "an unknown address",
        )
        sign_in_lock_record(scope, user=card.learner.user, address=address)
    elif scope.kind == DEVICE:
        logger.warning(
            "Card sign-in locked on device ref %s (%s, at %s) after %d refused cards",
            scope.ref,
            attempt.device,
            attempt.address or "an unknown address",
            count,
        )
        sign_in_lock_record(scope, address=address, device=attempt.device)
    else:
        logger.warning(
            "Card sign-in locked for devices without a cookie at %s after %d refused cards",
            attempt.address,
            count,
        )
        if address is not None:  # else the database cannot hold it; the cache still locks it
            sign_in_lock_record(scope, address=address)


def _ref(value: str) -> str:
    """Return a keyed hash of a device id or an address: a cache key and a log reference."""
    return salted_hmac(_REF_SALT, value, algorithm="sha256").hexdigest()[:32]
