"""Staff actions on sign-in: lifting a lock the throttle set."""

import logging

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from accounts.access import learner_account
from accounts.models import SignInLock
from accounts.sign_in_throttle import sign_in_lock_clear
from audit.models import AuditEvent
from audit.services import audit_record

logger = logging.getLogger(__name__)


def sign_in_lock_lift(*, lock: SignInLock, actor: AbstractBaseUser, address: str | None) -> bool:
    """Lift a sign-in lock now, audited; False if it had already ended or been lifted."""
    now = timezone.now()
    with transaction.atomic():
        # Conditional: of two staff lifting at once, one lifts and is audited.
        lifted = SignInLock.objects.filter(
            pk=lock.pk, lifted_at__isnull=True, locked_until__gt=now
        ).update(lifted_at=now, lifted_by=actor)
        if not lifted:
            return False
        audit_record(
            actor=actor,
            address=address,
            action=AuditEvent.Action.SIGN_IN_LOCK_LIFTED,
            learner=learner_account(lock.user) if lock.user else None,
            scope=lock.kind,
            account_id=lock.user_id,
            locked_address=lock.address,
            # A device's card lock: which device, as the roster names it.
            **({"locked_device": lock.device} if lock.device else {}),
        )
    # After the row: should the cache fail, the lock ends by itself at its time.
    sign_in_lock_clear(lock)
    logger.info("Sign-in lock %s (%s) lifted by user %s", lock.pk, lock.kind, actor.pk)
    return True
