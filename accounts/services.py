"""Staff actions on sign-in: lifting a lock the throttle set."""

import logging

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from accounts.access import learner_account
from accounts.models import TRUST_ROLES, SchoolRole, SignInLock, StaffProfile
from accounts.sign_in_throttle import sign_in_lock_clear
from accounts.user_cache import forget_cached_user
from audit.models import AuditEvent
from audit.services import audit_record
from schools.models import default_school_id

logger = logging.getLogger(__name__)


def staff_role_set(
    *, user: AbstractBaseUser, role: str, school_id: int | None = None
) -> str | None:
    """Give an account a role: a trust role above the schools, else a role in one school.

    The school worked in when none is named (schools.context), else the partner's first.
    Returns the role it held there before (None if none). The caller audits.
    """
    profile, _created = StaffProfile.objects.get_or_create(user=user)
    if role in TRUST_ROLES:
        before = profile.role or None
        if profile.role != role:
            profile.role = role
            profile.save(update_fields=["role"])
        return before
    if school_id is None:
        school_id = default_school_id()
    held = SchoolRole.objects.filter(user=user, school_id=school_id).first()
    if held is None:
        SchoolRole.objects.create(user=user, school_id=school_id, role=role)
        return None
    if held.role != role:
        SchoolRole.objects.filter(pk=held.pk).update(role=role)
        forget_cached_user(user.pk)
    return held.role


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
