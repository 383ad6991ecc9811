"""What the school's records (a roster sync) change about a learner: leaving, coming back, details.

The roster is not a member of staff: its changes are audited with no actor and
`source="roster"`. Each step checks the state it changes, so a sync applied twice (or again
after a crash) changes nothing more and records nothing twice.
"""

import logging
from datetime import date

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from audit.models import AuditEvent
from audit.services import audit_record
from learners.models import Learner
from learners.services import LEARNER_DETAILS, learner_details_set

logger = logging.getLogger(__name__)

ROSTER = "roster"


def learner_leave(
    *, learner: Learner, left_by: AbstractBaseUser | None, address: str | None, **detail: object
) -> bool:
    """Record that a learner left: no sign-in any more, records kept; False if gone already.

    Their account is deactivated by a save, which ends every session they have open
    (accounts.session_ending). `detail` (counts of what the caller ended) goes in the audit.
    """
    with transaction.atomic():
        now = timezone.now()
        left = Learner.objects.filter(pk=learner.pk, left_at__isnull=True).update(left_at=now)
        if not left:
            return False
        learner.left_at = now
        user = get_user_model().objects.get(pk=learner.user_id)
        if user.is_active:
            user.is_active = False
            user.save(update_fields=["is_active"])
        audit_record(
            actor=left_by,
            address=address,
            action=AuditEvent.Action.LEARNER_LEFT,
            learner=learner,
            source=ROSTER,
            **detail,
        )
    logger.info("Learner %s left the school (roster)", learner.pk)
    return True


def learner_return(
    *, learner: Learner, returned_by: AbstractBaseUser | None, address: str | None
) -> bool:
    """Bring back a learner who left: the same record, able to sign in again; False if here."""
    with transaction.atomic():
        returned = Learner.objects.filter(
            pk=learner.pk, left_at__isnull=False, status=Learner.Status.ACTIVE
        ).update(left_at=None)
        if not returned:
            return False
        learner.left_at = None
        user = get_user_model().objects.get(pk=learner.user_id)
        if not user.is_active:
            user.is_active = True
            user.save(update_fields=["is_active"])
        audit_record(
            actor=returned_by,
            address=address,
            action=AuditEvent.Action.LEARNER_RETURNED,
            learner=learner,
            source=ROSTER,
        )
    logger.info("Learner %s came back to the school (roster)", learner.pk)
    return True


def learner_records_change(
    *, learner: Learner, changed_by: AbstractBaseUser | None, address: str | None, **wanted
) -> list[str]:
    """Set the details the school's records give (of LEARNER_DETAILS); return those changed.

    As staff's corrections (learners.services.learner_details_change), only the portal's copy
    changes: the upstream keeps what it was given at registration (docs/partner-api.md). A
    level changed here is the one the portal shows and counts by from now on.
    """
    unknown = set(wanted) - set(LEARNER_DETAILS)
    if unknown:
        raise ValueError(f"not a learner's detail: {sorted(unknown)}")
    if isinstance(wanted.get("dob"), str):
        wanted["dob"] = date.fromisoformat(wanted["dob"])
    changed = learner_details_set(
        learner=learner, wanted=wanted, changed_by=changed_by, address=address, source=ROSTER
    )
    return changed or []
