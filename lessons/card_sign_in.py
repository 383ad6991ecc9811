"""Signing in with a card: which card, whether it may be used now and here, its one session.

Every refusal looks the same to the person holding the card (an unknown code, a void card, a
closed window, an address outside the school's network, a card live on another device, a
locked card): the page says to ask the teacher and names nobody. Only the teacher's lesson
page says which. Refusals are counted per device, per card and per address, and locks set
(lessons.card_throttle, which says why a valid card is never refused for its address alone).
"""

import enum
import logging
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from classes.models import SchoolGroup
from kit.addresses import address_in_networks, networks_parse
from learners.models import Learner
from lessons import card_secrets
from lessons.card_throttle import (
    CardAttempt,
    attempt_locked,
    card_locked,
    card_refusal_count,
    card_refusals_forget,
)
from lessons.models import CardRefusal, CardSession, SignInCard, SignInWindow
from schools.models import PartnerSettings

logger = logging.getLogger(__name__)

# The key, in a pupil's browser session, of the CardSession their card started.
CARD_SESSION = "card_session"


class Outcome(enum.Enum):
    ACCEPTED = "accepted"
    REFUSED = "refused"  # unknown, void, no open window, or not from the school's network
    IN_USE = "in_use"  # live on another device (shown to the teacher)
    TOO_MANY = "too_many"  # this device (or a device-less address) refused too many cards


@dataclass(frozen=True)
class CardCheck:
    """A card found usable now: whose it is, and the window it may sign in through."""

    outcome: Outcome
    card: SignInCard | None = None
    window: SignInWindow | None = None


@sensitive_variables("secret", "code")
def card_check(*, secret: str = "", code: str = "", attempt: CardAttempt) -> CardCheck:
    """Return whether a card (by QR secret or typed code) may sign in now, on this device."""
    if attempt_locked(attempt):
        return CardCheck(Outcome.TOO_MANY)
    card = _current_cards().filter(**_lookup(secret=secret, code=code)).first()
    if card is not None and card_locked(card):
        card_refusal_count(attempt)  # a refused code for the device and the address
        return CardCheck(Outcome.REFUSED)
    check = _usable(card, attempt.address)
    if check.outcome is Outcome.REFUSED:
        card_refusal_count(attempt, card)
    return check


def card_check_again(*, card_id: int, attempt: CardAttempt) -> CardCheck:
    """Check a card identified a moment ago (kept in the session) again, at the final tap."""
    if attempt_locked(attempt):
        return CardCheck(Outcome.TOO_MANY)
    card = _current_cards().filter(pk=card_id).first()
    if card is not None and card_locked(card):
        return CardCheck(Outcome.REFUSED)
    return _usable(card, attempt.address)


def _current_cards() -> QuerySet[SignInCard]:
    """Cards not voided, of learners still registered and at the school, with their accounts."""
    # A leaver's cards are voided when they leave; their leaving date refuses any one missed.
    return SignInCard.objects.select_related("learner__user").filter(
        voided_at__isnull=True, learner__status=Learner.Status.ACTIVE, learner__left_at__isnull=True
    )


def _usable(card: SignInCard | None, address: str | None) -> CardCheck:
    """Accept the card found, if a window of its pupil's is open and the network allowed."""
    window = _window_for(card.learner) if card else None
    if card is None or window is None or not _network_allows(address, card.school_id):
        return CardCheck(Outcome.REFUSED)
    return CardCheck(Outcome.ACCEPTED, card, window)


@sensitive_variables("secret", "code")
def _lookup(*, secret: str, code: str) -> dict[str, str]:
    """Return the filter finding a card by its QR secret or its typed code (none: no card)."""
    if secret and card_secrets.SECRET_PATTERN.match(secret):
        return {"secret_digest": card_secrets.digest("secret", secret)}
    if code and (normal := card_secrets.code_normal_form(code)):
        return {"code_digest": card_secrets.digest("code", normal)}
    return {"pk__in": []}


def _window_for(learner: Learner) -> SignInWindow | None:
    """Return an open window of a group the learner is in now (never an archived class's)."""
    groups = SchoolGroup.objects.current().filter(
        memberships__learner=learner, memberships__left_at__isnull=True
    )
    return (
        SignInWindow.objects.open()
        .filter(group__in=groups)
        .select_related("group")
        .order_by("-opened_at")
        .first()
    )


def _network_allows(address: str | None, school_id: int) -> bool:
    """Return whether the card's school lets cards in from this address."""
    listed = PartnerSettings.of(school_id).card_networks
    if not listed.strip():
        return True
    return address_in_networks(address, networks_parse(listed))


def _live_session(card: SignInCard) -> CardSession | None:
    """Return the card's live session, first ending those whose window has since closed."""
    for stale in CardSession.objects.filter(card=card, ended_at__isnull=True).select_related(
        "window"
    ):
        if not stale.window.is_open:
            _session_close(stale, CardSession.EndReason.WINDOW_CLOSED)
    return CardSession.objects.filter(card=card, ended_at__isnull=True).first()


def _refusal_record(check: CardCheck, attempt: CardAttempt) -> None:
    """Record a use of a card live on another device, for the teacher's roster, and count it."""
    card = check.card
    CardRefusal.objects.create(
        card=card, learner=card.learner, window=check.window, device=attempt.device
    )
    logger.info("Card of learner %s refused: in use on another device", card.learner_id)
    card_refusal_count(attempt, card)


def card_in_use_elsewhere(
    *, check: CardCheck, session_key: str | None, attempt: CardAttempt
) -> bool:
    """Return whether the card is live on another device (and tell the teacher so)."""
    live = _live_session(check.card)
    if live is None or (session_key and live.session_key == session_key):
        return False
    _refusal_record(check, attempt)
    return True


def card_session_begin(
    *, check: CardCheck, session_key: str | None, attempt: CardAttempt
) -> CardSession | None:
    """Start the card's one live session, or return None (and tell the teacher) if it has one.

    A card already live in this same browser session is simply that session again.
    """
    card, window = check.card, check.window
    with transaction.atomic():
        live = _live_session(card)
        if live is not None and session_key and live.session_key == session_key:
            card_refusals_forget(attempt, card)
            return live
        if live is None:
            try:
                with transaction.atomic():
                    session = CardSession.objects.create(
                        card=card, learner=card.learner, window=window, device=attempt.device
                    )
            except IntegrityError:
                pass  # another device started it a moment ago
            else:
                card_refusals_forget(attempt, card)
                return session
        _refusal_record(check, attempt)
        return None


def card_session_attach(session: CardSession, session_key: str) -> None:
    """Record the browser session the card session lives in (known once signed in)."""
    CardSession.objects.filter(pk=session.pk).update(session_key=session_key)


def _session_close(session: CardSession, reason: str) -> None:
    CardSession.objects.filter(pk=session.pk, ended_at__isnull=True).update(
        ended_at=timezone.now(), end_reason=reason
    )


def card_session_live(session_id: int) -> bool:
    """Return whether a card session may go on; end it if its window has closed."""
    session = (
        CardSession.objects.filter(pk=session_id)
        .select_related("window")
        .only("ended_at", "window__closed_at", "window__closes_at")
        .first()
    )
    if session is None or session.ended_at is not None:
        return False
    if not session.window.is_open:
        _session_close(session, CardSession.EndReason.WINDOW_CLOSED)
        return False
    return True


def card_session_finish(session_id: int, reason: str) -> None:
    """End a card session (signed out, or replaced by another pupil on the device)."""
    CardSession.objects.filter(pk=session_id, ended_at__isnull=True).update(
        ended_at=timezone.now(), end_reason=reason
    )
