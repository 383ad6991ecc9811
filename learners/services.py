"""Business rules for learners: registering one, correcting their details, a new password."""

import logging
from collections.abc import Callable
from datetime import date

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, IntegrityError, transaction
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_variables

from accounts.access import sees_whole_school
from accounts.sign_in_throttle import sign_in_unlock
from accounts.usernames import username_normal_form
from audit.models import AuditEvent
from audit.services import audit_record
from classes.archived import GroupArchived
from classes.models import SchoolGroup
from classes.services import group_learners_add
from learners.models import AGE_AND_LEVEL, Learner
from learners.registration import (
    UNUSABLE_ID,
    learner_activate,
    learner_discard,
    learner_save_pending,
    registration_failure,
    stale_registrations_discard,
    upstream_register,
)
from learners.signals import learner_level_changed
from ops.database import DATABASE_TROUBLE, write_when_database_returns
from partner_api import PartnerApiError, get_client
from signin.services import email_change_unlinks, sign_in_identities_unlink

logger = logging.getLogger(__name__)


class RegistrationFailed(Exception):
    """The learner could not be registered; nothing of it was kept locally."""

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field


class RegisteredNotRecorded(Exception):
    """The upstream registered the learner, but the database did not answer to record it."""

    def __init__(self, username: str):
        super().__init__("registered upstream, not recorded in the portal")
        self.username = username


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
    school_class: SchoolGroup | None = None,
) -> Learner:
    """Register a learner locally and upstream, audited; on failure keep nothing and say why.

    `address` is the client address of the staff member's request (None from a command);
    `school_class` the group the learner joins once registered.
    """
    # The form gives it normal already; a command or the demo seeding may not.
    username = username_normal_form(username)
    fields = {"email": email, "first_name": first_name, "last_name": last_name, "level": level}
    learner = _learner_create_pending(
        username=username,
        password=password,
        dob=dob,
        registered_by=registered_by,
        # A learner joins their class's school; else the school the staff member works in.
        school_id=school_class.school_id if school_class is not None else None,
        **fields,
    )
    try:
        created = upstream_register(
            get_client(), username=username, password=password, dob=dob, **fields
        )
    except PartnerApiError as error:
        learner_discard(learner_id=learner.pk)
        logger.info("Registration of learner %s failed upstream: %s", learner.pk, error)
        failure = registration_failure(error)
        raise RegistrationFailed(failure.form_message, field=failure.field) from error
    except BaseException:
        learner_discard(learner_id=learner.pk)  # a bug or an interrupted request: no stub
        raise

    def record() -> None:
        if Learner.objects.filter(pk=learner.pk, upstream_user_id=created.user_id).exists():
            return  # recorded by an earlier try whose commit's reply was lost
        with transaction.atomic():
            learner_activate(learner=learner, upstream_user_id=created.user_id, account_ready=True)
            audit_record(
                actor=registered_by,
                address=address,
                action=AuditEvent.Action.LEARNER_REGISTERED,
                learner=learner,
            )
            if school_class is not None:
                try:
                    group_learners_add(
                        group=school_class,
                        learners=[learner],
                        added_by=registered_by,
                        address=address,
                    )
                except GroupArchived:
                    # Archived since the form was read: the upstream has registered the
                    # learner, so they are kept, in no class, rather than lost.
                    logger.info(
                        "Learner %s not put in archived group %s", learner.pk, school_class.pk
                    )

    try:
        # The upstream has answered: through a database restart the answer waits here
        # (DATABASE_OUTAGE_HOLD_IN_REQUEST), never dropped at the first failed write.
        write_when_database_returns(record, what=f"learner {learner.pk}'s registration")
    except DATABASE_TROUBLE as error:
        logger.error("Learner %s is registered upstream but could not be recorded", learner.pk)
        raise RegisteredNotRecorded(username) from error
    except DatabaseError as error:
        # The upstream handed out a user_id we already hold (or cannot store): keep no
        # half-made record.
        learner_discard(learner_id=learner.pk)
        logger.exception("Learner %s could not be activated", learner.pk)
        raise RegistrationFailed(str(UNUSABLE_ID)) from error
    logger.info("Registered learner %s", learner.pk)
    return learner


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
    sign_in_unlock(user=user, lifted_by=reset_by)
    logger.info("Password of learner %s reset by user %s", learner.pk, reset_by.pk)


class LearnerNotEditable(Exception):
    """The learner's record can no longer be changed: their personal data was erased meanwhile."""


# What staff may correct in a learner's record (the username is how they sign in: it stays).
LEARNER_DETAILS = ("first_name", "last_name", "email", "dob", "level")


def learner_details_change(
    *,
    learner: Learner,
    changed_by: AbstractBaseUser,
    address: str | None,
    first_name: str,
    last_name: str,
    email: str,
    dob: date,
    level: str,
) -> list[str]:
    """Correct a learner's details in the portal only, audited; return the fields changed.

    The upstream has no endpoint to update a learner (docs/partner-api.md): its copy keeps
    what was given at registration. The audit event names the fields, never their values.
    """
    wanted = {
        "first_name": first_name,
        "last_name": last_name,
        "email": email,
        "dob": dob,
        "level": level,
    }

    def allowed(changed: list[str]) -> None:
        if set(changed) & set(AGE_AND_LEVEL) and not sees_whole_school(changed_by):
            raise PermissionDenied("only whole-school staff change a date of birth or level")

    changed = learner_details_set(
        learner=learner, wanted=wanted, changed_by=changed_by, address=address, check=allowed
    )
    if changed is None:
        raise LearnerNotEditable
    if changed:
        logger.info(
            "Learner %s: %s changed by user %s", learner.pk, ", ".join(changed), changed_by.pk
        )
    return changed


def learner_details_set(
    *,
    learner: Learner,
    wanted: dict[str, object],
    changed_by: AbstractBaseUser | None,
    address: str | None,
    check: Callable[[list[str]], None] | None = None,
    **audited: object,
) -> list[str] | None:
    """Set some of LEARNER_DETAILS in the portal, audited; the fields changed, None if erased.

    Staff's corrections and the school's records (learners.school_records) both come here;
    `check` may refuse the fields about to change, `audited` adds to the audit event.
    """
    with transaction.atomic():
        # Under the learner's lock, as erasure takes it: an erased record is never written to.
        current = (
            Learner.objects.select_for_update()
            .filter(pk=learner.pk, status=Learner.Status.ACTIVE)
            .first()
        )
        if current is None:
            return None
        changed = [
            name
            for name in LEARNER_DETAILS
            if name in wanted and getattr(current, name) != wanted[name]
        ]
        if not changed:
            return []
        if check is not None:
            check(changed)
        unlinked = {}
        # School identities link by the record's email: one linked under the old address
        # must not keep signing in as this pupil now that the address is another.
        if (
            "email" in changed
            and email_change_unlinks(current.email, wanted["email"])
            and sign_in_identities_unlink(current.user_id)
        ):
            unlinked["school_identity_unlinked"] = True
        for name in changed:
            setattr(current, name, wanted[name])
            setattr(learner, name, wanted[name])  # the caller's copy says what is now saved
        current.save(update_fields=changed)
        audit_record(
            actor=changed_by,
            address=address,
            action=AuditEvent.Action.LEARNER_CHANGED,
            learner=current,
            fields=changed,
            **audited,
            **unlinked,
        )
        if "level" in changed:
            learner_level_changed.send(sender=Learner, learner=current)
    return changed


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


@sensitive_variables("password")
def _learner_create_pending(
    *, username: str, password: str, registered_by: AbstractBaseUser, **fields
) -> Learner:
    """Save the learner and an inactive sign-in account before anything goes upstream."""
    stale_registrations_discard([username])
    try:
        return learner_save_pending(
            username=username, password=password, registered_by=registered_by, **fields
        )
    except IntegrityError as error:
        # Two staff registering the same username at once: the database decides.
        raise RegistrationFailed(
            _("That username is already taken. Choose another."), field="username"
        ) from error
