"""Business rules for learners' sign-in accounts: a password reset by staff."""

import logging

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.views.decorators.debug import sensitive_variables

from audit.models import AuditEvent
from audit.services import audit_record
from learners.models import Learner
from portal.auth import sign_in_unlock

logger = logging.getLogger(__name__)


@sensitive_variables("password")
def learner_password_reset(
    *, learner: Learner, password: str, reset_by: AbstractBaseUser, address: str | None = None
) -> None:
    """Give a learner a new local password, audited; every session they had open ends.

    The upstream has no endpoint for passwords, so only the portal's password changes.
    Django signs out the learner's other sessions by itself: each session holds a hash
    of the password, checked on every request.
    """
    user = learner.user
    with transaction.atomic():
        user.set_password(password)
        user.save(update_fields=["password"])
        audit_record(
            actor=reset_by,
            address=address,
            action=AuditEvent.Action.PASSWORD_RESET,
            learner=learner,
        )
    # A learner locked out by mistyping can sign in with the new password at once.
    sign_in_unlock(username=learner.username)
    logger.info("Password of learner %s reset by user %s", learner.pk, reset_by.pk)
