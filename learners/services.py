"""Business rules for learners: registration against the upstream."""

import logging
from datetime import date

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import DatabaseError, IntegrityError, transaction
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_variables

from audit.models import AuditEvent
from audit.services import audit_record
from learners.models import Learner
from learners.selectors import stale_pending_registrations
from portal.partner_api import (
    PartnerApiError,
    PartnerApiRejected,
    get_client,
)
from portal.upstream import failure_message, upstream_may_have_acted

logger = logging.getLogger(__name__)

# The spec gives no status for a taken username; a strict upstream answers 409.
USERNAME_TAKEN_STATUS = 409


class RegistrationFailed(Exception):
    """The learner could not be registered; nothing of it was kept locally."""

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field


@sensitive_variables("password")
def learner_register(
    *,
    username: str,
    password: str,
    dob: date,
    registered_by: AbstractBaseUser,
    address: str | None = None,
    email: str = "",
    first_name: str = "",
    last_name: str = "",
    level: str = "",
) -> Learner:
    """Register a learner locally and upstream, audited; on failure keep nothing and say why.

    `address` is the client address of the staff member's request (None from a command).
    """
    learner = _learner_create_pending(
        username=username,
        password=password,
        dob=dob,
        email=email,
        first_name=first_name,
        last_name=last_name,
        level=level,
        registered_by=registered_by,
    )
    try:
        created = get_client().create_learner(
            username=username,
            password=password,
            dob=dob,
            email=email or None,
            first_name=first_name or None,
            last_name=last_name or None,
            level=level or None,
        )
    except PartnerApiError as error:
        _learner_discard(learner)
        logger.info("Registration of learner %s failed upstream: %s", learner.pk, error)
        taken = isinstance(error, PartnerApiRejected) and error.status == USERNAME_TAKEN_STATUS
        raise RegistrationFailed(
            _registration_failure(error), field="username" if taken else None
        ) from error
    except BaseException:
        _learner_discard(learner)  # a bug or an interrupted request must not leave a stub
        raise

    try:
        with transaction.atomic():
            learner.upstream_user_id = created.user_id
            learner.status = Learner.Status.ACTIVE
            learner.save(update_fields=["upstream_user_id", "status"])
            learner.user.is_active = True
            learner.user.save(update_fields=["is_active"])
            audit_record(
                actor=registered_by,
                address=address,
                action=AuditEvent.Action.LEARNER_REGISTERED,
                learner=learner,
            )
    except DatabaseError as error:
        # The upstream handed out a user_id we already hold (or cannot store): keep no
        # half-made record.
        _learner_discard(learner)
        logger.exception("Learner %s could not be activated", learner.pk)
        raise RegistrationFailed(
            _(
                "The assessment service returned a learner id the portal cannot use. "
                "Nothing was registered here; tell your administrator."
            )
        ) from error
    logger.info("Registered learner %s", learner.pk)
    return learner


def _registration_failure(error: PartnerApiError) -> str:
    """Explain a failed registration, saying when the upstream may have it anyway."""
    message = failure_message(error)
    if isinstance(error, PartnerApiRejected) and error.status == USERNAME_TAKEN_STATUS:
        # Translators: %(message)s is the assessment service's refusal, in sentences.
        return _(
            "%(message)s The username may belong to an earlier registration that did not "
            "finish. Choose another username."
        ) % {"message": message}
    if upstream_may_have_acted(error):
        # Translators: %(message)s is what went wrong with the assessment service, in
        # sentences.
        return _(
            "%(message)s Nothing was registered in the portal, but the service may have "
            "registered the learner without confirming it: try again, and if the username is "
            "then reported as taken, choose another."
        ) % {"message": message}
    return message


@sensitive_variables("password")
def _learner_create_pending(*, username: str, password: str, registered_by, **fields) -> Learner:
    """Save the learner and an inactive sign-in account before anything goes upstream."""
    User = get_user_model()
    for stale in stale_pending_registrations(username):
        _learner_discard(stale)
    try:
        with transaction.atomic():
            user = User(username=username, is_active=False)
            user.set_password(password)
            user.save()
            return Learner.objects.create(
                user=user,
                username=username,
                registered_by=registered_by,
                status=Learner.Status.PENDING,
                **fields,
            )
    except IntegrityError as error:
        # Two staff registering the same username at once: the database decides.
        raise RegistrationFailed(
            _("That username is already taken. Choose another."), field="username"
        ) from error


def _learner_discard(learner: Learner) -> None:
    """Remove a learner whose upstream registration did not happen."""
    with transaction.atomic():
        user = learner.user
        learner.delete()
        user.delete()


def learner_results_viewed(
    *, learner: Learner, assessment_id: int, viewed_by: AbstractBaseUser, address: str | None
) -> None:
    """Record in the audit trail that a member of staff was shown a learner's results."""
    audit_record(
        actor=viewed_by,
        address=address,
        action=AuditEvent.Action.RESULTS_VIEWED,
        learner=learner,
        assessment_id=assessment_id,
    )
