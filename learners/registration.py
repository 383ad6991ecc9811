"""Registering a learner: the steps the single form and the bulk run share.

Each registration saves a pending learner and an inactive sign-in account first, then calls
create-learner, then activates the learner with the upstream's user_id, or discards what it
saved; a failure is explained by one function, in the words of a form and of a file's row.
The single form does it for one learner (learners.services.learner_register), the bulk run for
a file's rows, a batch of accounts at a time (imports.run).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.functional import lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.debug import sensitive_variables

from accounts.user_cache import forget_cached_user
from accounts.usernames import username_normal_form
from learners.models import Learner
from learners.selectors import PENDING_REGISTRATION_STALE_AFTER
from partner_api import (
    CreatedLearner,
    PartnerApiClient,
    PartnerApiError,
    PartnerApiRejected,
    PartnerApiUnavailable,
)
from partner_api.upstream import failure_cause, failure_message, upstream_may_have_acted
from schools.models import default_school_id

# The spec gives no status for a taken username; a strict upstream answers 409.
USERNAME_TAKEN_STATUS = 409
# "Service unavailable": the service says it cannot take requests just now (RFC 9110), so it
# turned the registration away rather than registering the learner. The client still never
# repeats it by itself (a proxy may say 503 after passing the request on); if that ever
# happened, sending the form again is still safe: the username is then reported as taken,
# and that message says what to do.
SERVICE_UNAVAILABLE_STATUS = 503

# The service may have carried out a registration it never confirmed: registering again could
# then register the learner twice, so this is said wherever that may have happened.
MAYBE_REGISTERED = gettext_lazy(
    "The service may have registered this learner without confirming it. Include the row in "
    "a new file; if its username is then reported as taken, the service kept it, so choose "
    "another username."
)
TAKEN_UPSTREAM = gettext_lazy(
    "The assessment service says this username is already taken (perhaps by another "
    "partner, or by an earlier registration that did not finish). Choose another username."
)


def _unusable_id() -> str:
    return _(
        "The assessment service returned a learner id the portal cannot use. Nothing was kept "
        "in the portal; tell your administrator."
    )


UNUSABLE_ID = lazy(_unusable_id, str)()


# Saving before the call ------------------------------------------------------------------------


@sensitive_variables("password")
def account_pending(*, username: str, password: str | None) -> AbstractBaseUser:
    """Return an unsaved, inactive sign-in account; without a password, an unusable one."""
    user = get_user_model()(username=username, is_active=False)
    if password is None:
        user.set_unusable_password()  # the bulk run hashes later, off the upstream's path
    else:
        user.set_password(password)
    return user


def learner_pending(
    *,
    user: AbstractBaseUser,
    username: str,
    registered_by: AbstractBaseUser | None,
    dob: date | None,
    email: str = "",
    first_name: str = "",
    last_name: str = "",
    level: str = "",
    school_id: int | None = None,
) -> Learner:
    """Return an unsaved learner awaiting its upstream registration, of `school_id`.

    (Else of the school worked in: a member of staff registers into their school.)
    """
    return Learner(
        school_id=school_id or default_school_id(),
        user=user,
        username=username,
        registered_by=registered_by,
        status=Learner.Status.PENDING,
        dob=dob,
        email=email,
        first_name=first_name,
        last_name=last_name,
        level=level,
    )


@sensitive_variables("password")
def learner_save_pending(
    *, username: str, password: str | None, registered_by: AbstractBaseUser | None, **fields
) -> Learner:
    """Save a pending learner and its inactive account; IntegrityError if the name is taken."""
    with transaction.atomic():
        user = account_pending(username=username, password=password)
        user.save()
        learner = learner_pending(
            user=user, username=username, registered_by=registered_by, **fields
        )
        learner.save()
    return learner


def stale_registrations_discard(usernames: Iterable[str]) -> None:
    """Discard pending registrations of these usernames (in any form) left by a dead process."""
    stale = Learner.objects.filter(
        username__in={username_normal_form(username) for username in usernames},
        status=Learner.Status.PENDING,
        registered_at__lt=timezone.now() - PENDING_REGISTRATION_STALE_AFTER,
    )
    for learner_id in stale.values_list("pk", flat=True):
        learner_discard(learner_id=learner_id)


# The call --------------------------------------------------------------------------------------


@sensitive_variables("password")
def upstream_register(
    client: PartnerApiClient,
    *,
    username: str,
    password: str,
    dob: date,
    email: str = "",
    first_name: str = "",
    last_name: str = "",
    level: str = "",
) -> CreatedLearner:
    """Call create-learner; blank optional fields are left out of the request."""
    return client.create_learner(
        username=username,
        password=password,
        dob=dob,
        email=email or None,
        first_name=first_name or None,
        last_name=last_name or None,
        level=level or None,
    )


# After the call --------------------------------------------------------------------------------


def learner_activate(
    *,
    learner: Learner,
    upstream_user_id: str,
    account_ready: bool,
    password_hash: str | None = None,
) -> None:
    """Record the upstream's user_id on a pending learner; open its account if ready.

    `password_hash`, made beforehand (a bulk registration's: while staff read the preview,
    or while the call was under way), goes into the account in the same write that opens it.

    Raises DatabaseError when the id cannot be stored (one the portal already holds): the
    caller discards the learner and explains it with UNUSABLE_ID.
    """
    # Both callers record their outcome in a transaction around this one, and undo all of it
    # on a DatabaseError: a savepoint would only add two round trips to every registration.
    with transaction.atomic(savepoint=False):
        Learner.objects.filter(pk=learner.pk, status=Learner.Status.PENDING).update(
            upstream_user_id=upstream_user_id, status=Learner.Status.ACTIVE
        )
        if account_ready:
            fields = {"is_active": True}
            if password_hash is not None:
                fields["password"] = password_hash
            get_user_model().objects.filter(pk=learner.user_id).update(**fields)
        forget_cached_user(learner.user_id)  # updates send no signal
    learner.upstream_user_id, learner.status = upstream_user_id, Learner.Status.ACTIVE
    if account_ready and Learner.user.is_cached(learner):
        learner.user.is_active = True  # the caller's copy says what the database now says


def learner_discard(*, learner_id: int) -> None:
    """Remove a pending learner and its account (never one that became active)."""
    with transaction.atomic():
        learner = (
            Learner.objects.select_for_update()
            .filter(pk=learner_id, status=Learner.Status.PENDING)
            .first()
        )
        if learner is not None:
            user = learner.user
            learner.delete()
            user.delete()


# Explaining a failure --------------------------------------------------------------------------


@dataclass(frozen=True)
class RegistrationFailure:
    """Why the upstream did not register a learner, as a form and as a file's row say it."""

    username_taken: bool
    form_message: str
    row_reason: str

    @property
    def field(self) -> str | None:
        """Return the form field the failure belongs to, if any."""
        return "username" if self.username_taken else None


def registration_failure(error: PartnerApiError) -> RegistrationFailure:
    """Explain a failed create-learner call, saying when the upstream may have acted anyway."""
    message = failure_message(error)
    if isinstance(error, PartnerApiRejected) and error.status == USERNAME_TAKEN_STATUS:
        # Translators: %(message)s is the assessment service's refusal, in sentences.
        form = _(
            "%(message)s The username may belong to an earlier registration that did not "
            "finish. Choose another username."
        ) % {"message": message}
        return RegistrationFailure(True, form, str(TAKEN_UPSTREAM))
    if isinstance(error, PartnerApiRejected):
        # Translators: %(message)s is what the assessment service's refusal means, in
        # sentences.
        row = _("Not registered. %(message)s") % {"message": message}
        return RegistrationFailure(False, message, row)
    if isinstance(error, PartnerApiUnavailable) and error.status == SERVICE_UNAVAILABLE_STATUS:
        # Nothing was kept locally (learners.services discards the pending learner), so the
        # same form can simply be sent again. A file's row still says its outcome is unknown,
        # as bulk registration always has of a 503.
        form = _(
            "The assessment service was unavailable and turned the registration away, so the "
            "learner is not registered and nothing was kept in the portal. Try again in a few "
            "minutes with the same details."
        )
        return RegistrationFailure(False, form, _row_reason_maybe_registered(error))
    if upstream_may_have_acted(error):
        # Translators: %(message)s is what went wrong with the assessment service, in
        # sentences.
        form = _(
            "%(message)s Nothing was registered in the portal, but the service may have "
            "registered the learner without confirming it: try again, and if the username is "
            "then reported as taken, choose another."
        ) % {"message": message}
        return RegistrationFailure(False, form, _row_reason_maybe_registered(error))
    # Translators: %(message)s is what went wrong, in sentences.
    row = _(
        "Not registered: nothing was sent for this row. %(message)s Include it in a new file."
    ) % {"message": message}
    return RegistrationFailure(False, message, row)


def _row_reason_maybe_registered(error: PartnerApiError) -> str:
    """Say why a file's row may have been registered upstream without the portal knowing."""
    # Only what went wrong: "try again in a few minutes" would invite a second registration.
    # Translators: %(cause)s is what went wrong, starting in lower case, e.g. "the assessment
    # service had an internal error"; %(maybe_registered)s is the sentences "The service may
    # have registered this learner without confirming it. …".
    return _("Outcome unknown: %(cause)s. %(maybe_registered)s") % {
        "cause": failure_cause(error),
        "maybe_registered": MAYBE_REGISTERED,
    }
