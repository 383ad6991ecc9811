"""Cards (issue, print, void and reissue) and sign-in windows (open, close); all audited."""

from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from audit.models import AuditEvent
from audit.services import audit_record
from classes.archived import group_lock_open
from classes.models import SchoolGroup
from classes.services import LearnersLeft
from learners.models import Learner
from lessons import card_secrets
from lessons.models import CardSession, SignInCard, SignInWindow
from schools.models import PartnerSettings

Action = AuditEvent.Action


@dataclass(frozen=True)
class PrintedCard:
    """What one printed card shows: whose it is, its QR secret and its typed code."""

    learner: Learner
    group_name: str
    secret: str
    code: str

    @property
    def code_display(self) -> str:
        return card_secrets.code_display(self.code)


def _refuse_leavers(learners: list[Learner]) -> None:
    """Refuse cards to learners who left the school: they no longer sign in."""
    left = [learner for learner in learners if learner.left_at is not None]
    if left:
        raise LearnersLeft(left)


def _card_issue(*, learner: Learner, issued_by: AbstractBaseUser | None) -> SignInCard:
    secret, code = card_secrets.secret_new(), card_secrets.code_new()
    return SignInCard.objects.create(
        learner=learner,
        school_id=learner.school_id,
        secret_digest=card_secrets.digest("secret", secret),
        code_digest=card_secrets.digest("code", code),
        secret_encrypted=card_secrets.seal(secret),
        code_encrypted=card_secrets.seal(code),
        issued_by=issued_by,
    )


def _card_printed(card: SignInCard, learner: Learner, group_name: str) -> PrintedCard:
    return PrintedCard(
        learner=learner,
        group_name=group_name,
        secret=card_secrets.unseal(card.secret_encrypted),
        code=card_secrets.unseal(card.code_encrypted),
    )


def _current_cards(learners: list[Learner], *, issued_by) -> tuple[dict[int, SignInCard], int]:
    """Return each learner's current card, issuing the missing ones; and how many were new."""
    cards = {
        card.learner_id: card
        for card in SignInCard.objects.filter(learner__in=learners, voided_at__isnull=True)
    }
    issued = 0
    for learner in learners:
        if learner.pk not in cards:
            cards[learner.pk] = _card_issue(learner=learner, issued_by=issued_by)
            issued += 1
    return cards, issued


@transaction.atomic
def group_cards_print(
    *,
    group: SchoolGroup,
    learners: list[Learner],
    printed_by: AbstractBaseUser,
    address: str | None,
) -> list[PrintedCard]:
    """Return the group's cards to print: the same cards as last time, new ones where missing.

    Raises GroupArchived for last year's class, LearnersLeft if a learner left the school.
    """
    group_lock_open(group)
    _refuse_leavers(learners)
    # Locked in learner order: two staff printing at once issue each missing card once.
    locked = list(Learner.objects.select_for_update().filter(pk__in=[x.pk for x in learners]))
    cards, issued = _current_cards(locked, issued_by=printed_by)
    audit_record(
        actor=printed_by,
        address=address,
        action=Action.CARDS_PRINTED,
        group=group.pk,
        cards=len(learners),
        issued=issued,
    )
    return [_card_printed(cards[learner.pk], learner, group.name) for learner in learners]


@transaction.atomic
def learner_card_print(
    *, learner: Learner, group_name: str, printed_by: AbstractBaseUser, address: str | None
) -> PrintedCard:
    """Return one learner's card to print (issued if they have none); LearnersLeft for a leaver."""
    locked = Learner.objects.select_for_update().get(pk=learner.pk)
    _refuse_leavers([locked])
    cards, issued = _current_cards([locked], issued_by=printed_by)
    audit_record(
        actor=printed_by,
        address=address,
        action=Action.CARDS_PRINTED,
        learner=learner,
        cards=1,
        issued=issued,
    )
    return _card_printed(cards[learner.pk], learner, group_name)


@transaction.atomic
def cards_reissue(
    *, learners: list[Learner], reissued_by: AbstractBaseUser, address: str | None
) -> int:
    """Void the learners' current cards (ending their sessions) and issue new ones.

    LearnersLeft if a learner left the school: nothing is voided or issued then.
    """
    now = timezone.now()
    locked = list(Learner.objects.select_for_update().filter(pk__in=[x.pk for x in learners]))
    _refuse_leavers(locked)
    void = SignInCard.objects.filter(learner__in=locked, voided_at__isnull=True)
    CardSession.objects.filter(card__in=void, ended_at__isnull=True).update(
        ended_at=now, end_reason=CardSession.EndReason.CARD_VOIDED
    )
    void.update(voided_at=now, voided_by=reissued_by)
    for learner in locked:
        _card_issue(learner=learner, issued_by=reissued_by)
        audit_record(
            actor=reissued_by, address=address, action=Action.CARD_REISSUED, learner=learner
        )
    return len(locked)


def window_current(group: SchoolGroup) -> SignInWindow | None:
    """Return the group's open sign-in window, if any."""
    return SignInWindow.objects.open().filter(group=group).first()


def _windows_expired_close(group: SchoolGroup) -> None:
    """Close (as of their end) the group's windows that ran out without being closed."""
    expired = SignInWindow.objects.filter(
        group=group, closed_at__isnull=True, closes_at__lte=timezone.now()
    )
    for window in expired:
        window.sessions.filter(ended_at__isnull=True).update(
            ended_at=window.closes_at, end_reason=CardSession.EndReason.WINDOW_CLOSED
        )
    expired.update(closed_at=F("closes_at"))


@transaction.atomic
def window_open(
    *, group: SchoolGroup, minutes: int, opened_by: AbstractBaseUser, address: str | None
) -> SignInWindow:
    """Open card sign-in for the group for `minutes` (at most the partner's maximum).

    If it is open already, its end moves to `minutes` from now. Raises GroupArchived for
    last year's class.
    """
    minutes = max(1, min(minutes, PartnerSettings.of(group.school_id).card_window_max_minutes))
    group_lock_open(group)  # one opener at a time; never last year's archived class
    _windows_expired_close(group)
    closes_at = timezone.now() + timedelta(minutes=minutes)
    window = window_current(group)
    if window is None:
        window = SignInWindow.objects.create(
            group=group,
            school_id=group.school_id,
            opened_by=opened_by,
            closes_at=closes_at,
            minutes=minutes,
        )
    else:
        window.closes_at, window.minutes = closes_at, minutes
        window.save(update_fields=["closes_at", "minutes"])
    audit_record(
        actor=opened_by,
        address=address,
        action=Action.SIGN_IN_OPENED,
        group=group.pk,
        minutes=minutes,
    )
    return window


@transaction.atomic
def window_close(*, group: SchoolGroup, closed_by: AbstractBaseUser, address: str | None) -> bool:
    """Close the group's card sign-in now, ending every session it started; False if not open."""
    SchoolGroup.objects.select_for_update().get(pk=group.pk)
    _windows_expired_close(group)
    window = window_current(group)
    if window is None:
        return False
    now = timezone.now()
    window.sessions.filter(ended_at__isnull=True).update(
        ended_at=now, end_reason=CardSession.EndReason.WINDOW_CLOSED
    )
    window.closed_at, window.closed_by = now, closed_by
    window.save(update_fields=["closed_at", "closed_by"])
    audit_record(actor=closed_by, address=address, action=Action.SIGN_IN_CLOSED, group=group.pk)
    return True


@transaction.atomic
def card_session_end(
    *, session: CardSession, ended_by: AbstractBaseUser, address: str | None
) -> bool:
    """End one pupil's card session from the lesson page; False if it had ended already."""
    ended = CardSession.objects.filter(pk=session.pk, ended_at__isnull=True).update(
        ended_at=timezone.now(), end_reason=CardSession.EndReason.ENDED_BY_STAFF
    )
    if ended:
        audit_record(
            actor=ended_by,
            address=address,
            action=Action.CARD_SESSION_ENDED,
            learner=session.learner,
            group=session.window.group_id,
        )
    return bool(ended)


def cards_forget_learner(*, learner: Learner) -> int:
    """Delete an erased learner's sign-in cards, their sessions and refusals; return how many."""
    # A card is of no use to a learner who may no longer sign in, and its sessions and refusals
    # say when and on which device they did; nothing is counted from them, so all of it goes
    # (sessions and refusals with their card). Runs in the erasure's transaction.
    deleted, _ = SignInCard.objects.filter(learner=learner).delete()
    return deleted


@transaction.atomic
def learner_cards_void(*, learner: Learner, voided_by: AbstractBaseUser | None) -> int:
    """Void a learner's current card and end its live sessions, issuing none; return how many.

    For a pupil who left the school: the caller audits the leaving, which counts them.
    """
    now = timezone.now()
    void = SignInCard.objects.filter(learner=learner, voided_at__isnull=True)
    CardSession.objects.filter(card__in=void, ended_at__isnull=True).update(
        ended_at=now, end_reason=CardSession.EndReason.CARD_VOIDED
    )
    return void.update(voided_at=now, voided_by=voided_by)
