"""Placing and lifting a safeguarding hold on a learner's records (privacy.selectors.hold_of).

Any member of staff who sees the whole school may place a hold: keeping records longer is
always safe. Only a safeguarding lead may lift one, and only giving a reason: lifting is the
decision that lets the records be erased (by staff, or by the retention sweep).
"""

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from accounts.access import is_safeguarding_lead
from audit.models import AuditEvent
from audit.services import audit_record
from learners.models import Learner
from privacy.models import RecordsHold
from privacy.selectors import hold_of


class HoldLiftRefused(Exception):
    """A hold may be lifted only by a safeguarding lead, with a reason; nothing was lifted."""

    NOT_A_LEAD = "not_a_lead"
    NO_REASON = "no_reason"

    def __init__(self, code: str):
        super().__init__(code)
        self.code = code


def records_hold_place(
    *, learner: Learner, placed_by: AbstractBaseUser, address: str | None = None, reason: str = ""
) -> bool:
    """Keep a learner's records until staff lift the hold; return False if already held."""
    with transaction.atomic():
        learner = Learner.objects.select_for_update().get(pk=learner.pk)
        record = RecordsHold.objects.filter(learner=learner).first()
        if record is not None and record.in_force:
            return False
        RecordsHold.objects.update_or_create(
            learner=learner,
            defaults={"placed_at": timezone.now(), "placed_by": placed_by, "reason": reason},
        )
        # The reason stays out of the trail: it is free text about a child, and the trail
        # outlives an erasure.
        audit_record(
            actor=placed_by,
            address=address,
            action=AuditEvent.Action.HOLD_PLACED,
            learner=learner,
            with_reason=bool(reason),
        )
    return True


def records_hold_lift(
    *,
    learner: Learner,
    lifted_by: AbstractBaseUser,
    reason: str,
    address: str | None = None,
    whole: bool = False,
) -> bool:
    """Lift the hold in force as a safeguarding lead, saying why; False if nothing held.

    Staff's own hold goes first and the automatic one stays (lifting it is a decision of its
    own), unless `whole`: then both go, as before an erasure. Raise HoldLiftRefused for anyone
    but a lead, or without a reason.
    """
    if not is_safeguarding_lead(lifted_by):
        raise HoldLiftRefused(HoldLiftRefused.NOT_A_LEAD)
    reason = reason.strip()
    if not reason:
        raise HoldLiftRefused(HoldLiftRefused.NO_REASON)
    with transaction.atomic():
        learner = Learner.objects.select_for_update().get(pk=learner.pk)
        # Taken before reading: a concern raised while this runs is not covered by the lift.
        now = timezone.now()
        hold = hold_of(learner, today=timezone.localdate(now))
        changes: dict[str, object] = {"lift_reason": reason}
        lifted = []
        if hold.placed is not None:
            changes.update(placed_at=None, placed_by=None, reason="")
            lifted.append("placed")
        if hold.automatic and (whole or not lifted):
            changes.update(lifted_at=now, lifted_by=lifted_by)
            lifted.append("automatic")
        if not lifted:
            return False
        RecordsHold.objects.update_or_create(learner=learner, defaults=changes)
        # As with placing, the reason stays out of the trail; the event says one was given.
        for kind in lifted:
            audit_record(
                actor=lifted_by,
                address=address,
                action=AuditEvent.Action.HOLD_LIFTED,
                learner=learner,
                hold=kind,
                with_reason=True,
            )
    return True
