"""Signing in with a card: which card, whether it may be used now and here, its one session.

Every refusal looks the same to the person holding the card (an unknown code, a void card, a
closed window, an address outside the school's network, a card live on another device): the
page says to ask the teacher and names nobody. Only the teacher's lesson page says which.
"""

import enum
import logging
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django.views.decorators.debug import sensitive_variables

from accounts.sign_in_throttle import count_up
from classes.models import SchoolGroup
from kit.addresses import address_in_networks, networks_parse
from learners.models import Learner
from lessons import card_secrets
from lessons.models import CardRefusal, CardSession, SignInCard, SignInWindow
from schools.models import PartnerSettings

logger = logging.getLogger(__name__)

# The key, in a pupil's browser session, of the CardSession their card started.
CARD_SESSION = "card_session"


class Outcome(enum.Enum):
    ACCEPTED = "accepted"
    REFUSED = "refused"  # unknown, void, no open window, or not from the school's network
    IN_USE = "in_use"  # live on another device (shown to the teacher)
    TOO_MANY = "too_many"  # too many refused cards from this address lately


@dataclass(frozen=True)
class CardCheck:
    """A card found usable now: whose it is, and the window it may sign in through."""

    outcome: Outcome
    card: SignInCard | None = None
    window: SignInWindow | None = None


@sensitive_variables("secret", "code")
def card_check(*, secret: str = "", code: str = "", address: str | None) -> CardCheck:
    """Return whether a card (by QR secret or typed code) may sign in now, from this address."""
    if _too_many_refusals(address):
        return CardCheck(Outcome.TOO_MANY)
    check = _usable(_current_cards().filter(**_lookup(secret=secret, code=code)), address)
    if check.outcome is Outcome.REFUSED:
        _refusal_count(address)
    return check


def card_check_again(*, card_id: int, address: str | None) -> CardCheck:
    """Check a card identified a moment ago (kept in the session) again, at the final tap."""
    return _usable(_current_cards().filter(pk=card_id), address)


def _current_cards() -> QuerySet[SignInCard]:
    """Cards not voided, of learners still registered, with their accounts."""
    return SignInCard.objects.select_related("learner__user").filter(
        voided_at__isnull=True, learner__status=Learner.Status.ACTIVE
    )


def _usable(cards: QuerySet[SignInCard], address: str | None) -> CardCheck:
    """Accept the card found, if a window of its pupil's is open and the network allowed."""
    card = cards.first()
    window = _window_for(card.learner) if card else None
    if card is None or window is None or not _network_allows(address):
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
    """Return an open window of a group the learner is in now."""
    groups = SchoolGroup.objects.filter(
        memberships__learner=learner, memberships__left_at__isnull=True
    )
    return (
        SignInWindow.objects.open()
        .filter(group__in=groups)
        .select_related("group")
        .order_by("-opened_at")
        .first()
    )


def _network_allows(address: str | None) -> bool:
    listed = PartnerSettings.current().card_networks
    if not listed.strip():
        return True
    return address_in_networks(address, networks_parse(listed))


def _refusal_key(address: str | None) -> str:
    ref = salted_hmac("lessons.card-refusals", address or "unknown").hexdigest()[:32]
    return f"cards:refused:{ref}"


def _too_many_refusals(address: str | None) -> bool:
    return (cache.get(_refusal_key(address)) or 0) >= settings.CARD_REFUSAL_LIMIT_PER_IP


def _refusal_count(address: str | None) -> None:
    """Count a refused card from an address: guessing codes stops at the limit."""
    count = count_up(_refusal_key(address), window=settings.LOGIN_LOCKOUT_DURATION)
    if count == settings.CARD_REFUSAL_LIMIT_PER_IP:
        logger.warning("Card sign-in paused for %s after %d refused cards", address, count)


def _live_session(card: SignInCard) -> CardSession | None:
    """Return the card's live session, first ending those whose window has since closed."""
    for stale in CardSession.objects.filter(card=card, ended_at__isnull=True).select_related(
        "window"
    ):
        if not stale.window.is_open:
            _session_close(stale, CardSession.EndReason.WINDOW_CLOSED)
    return CardSession.objects.filter(card=card, ended_at__isnull=True).first()


def _refusal_record(check: CardCheck, device: str) -> None:
    """Record a use of a card live on another device, for the teacher's roster."""
    card = check.card
    CardRefusal.objects.create(card=card, learner=card.learner, window=check.window, device=device)
    logger.info("Card of learner %s refused: in use on another device", card.learner_id)


def card_in_use_elsewhere(*, check: CardCheck, session_key: str | None, device: str) -> bool:
    """Return whether the card is live on another device (and tell the teacher so)."""
    live = _live_session(check.card)
    if live is None or (session_key and live.session_key == session_key):
        return False
    _refusal_record(check, device)
    return True


def card_session_begin(
    *, check: CardCheck, session_key: str | None, device: str
) -> CardSession | None:
    """Start the card's one live session, or return None (and tell the teacher) if it has one.

    A card already live in this same browser session is simply that session again.
    """
    card, window = check.card, check.window
    with transaction.atomic():
        live = _live_session(card)
        if live is not None and session_key and live.session_key == session_key:
            return live
        if live is None:
            try:
                with transaction.atomic():
                    return CardSession.objects.create(
                        card=card, learner=card.learner, window=window, device=device
                    )
            except IntegrityError:
                pass  # another device started it a moment ago
        _refusal_record(check, device)
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
