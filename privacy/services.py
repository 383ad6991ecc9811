"""Personal data of one learner: erase it locally, or export all of it as JSON.

What erasure keeps, and why: the anonymous record staff count with. The learner row stays
(status `erased`, level, when and by whom registered), and so do their attempts (assessment,
state and dates) and results (LOA score, risk level, focus areas and their needs-help flags).
None of these names anyone once the names, username, email, date of birth, upstream id,
answers, question content, session and the results' free text (trait title and copy, the
three HTML fields raw and sanitized) are gone. Safeguarding alerts keep their timings for the
figures, without the learner, the attempt or the values that raised them; follow-ups, sign-in
cards (with their sessions and refused uses), a linked school account and the second factors,
and a safeguarding hold go. The upstream keeps its own copy: the spec has no endpoint to delete
a learner there.

Each app forgets its own part through a service of its own (`attempts_forget_learner`,
`alerts_forget_learner`, `followups_forget_learner`, `import_rows_forget`,
`cards_forget_learner`, `sign_in_identities_forget`), inside the one transaction
`learner_erase` opens; this module writes only the learner, their account, the hold and the
admin's history.
"""

import logging
import secrets
from datetime import date, datetime

from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.db.models import Model, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy

from assessments.models import AssessmentAttempt, AssessmentResult, AttemptAnswer
from assessments.services import AttemptBeingSent, attempts_forget_learner
from audit.models import AuditEvent
from audit.services import audit_record
from followups.services import followups_export, followups_forget_learner
from imports.services import import_rows_forget
from learners.models import Learner
from lessons.services import cards_forget_learner
from privacy.models import RecordsHold
from privacy.selectors import ERASURE_WAITS_FOR_ALERT, ERASURE_WAITS_FOR_LIFT, erasure_wait
from safeguarding.services import alerts_forget_learner
from signin.services import sign_in_identities_export, sign_in_identities_forget

logger = logging.getLogger(__name__)

# The file's format, for programs reading it: not translated.
EXPORT_FORMAT = "partner-portal learner export, version 1"
# For the person reading the file: in the language of the staff member who exported it.
UPSTREAM_COPY_NOTE = gettext_lazy(
    "The assessment service keeps its own copy of the registration, answers and results; "
    "the portal cannot delete or export it (the service offers no way to)."
)


class ErasureDeferred(Exception):
    """A submission is being sent right now: erase once it has finished."""


class ErasureRefused(Exception):
    """The safeguarding leads must act before the records may go: nothing was erased."""


class ErasureHeld(ErasureRefused):
    """The records are under a safeguarding hold: a lead must lift it, with a reason, first."""


class ErasureAlertWaiting(ErasureRefused):
    """A safeguarding alert about the learner waits for a lead to acknowledge it."""


def learner_erase(
    *,
    learner: Learner,
    erased_by: AbstractBaseUser | None,
    address: str | None = None,
    action: str = AuditEvent.Action.LEARNER_ERASED,
    today: date | None = None,
    **detail: object,
) -> Learner:
    """Remove a learner's personal data and answers, keeping an anonymous record for counts.

    Audited in the same transaction: no erasure without its event, and no event without it.
    `erased_by` None is the system: the retention sweep (privacy.retention), with its action
    and the day it judges by (`today`). Refused, for everyone, while an alert about the
    learner is unacknowledged (ErasureAlertWaiting) or a hold keeps the records (ErasureHeld).
    """
    with transaction.atomic():
        learner = Learner.objects.select_for_update().select_related("user").get(pk=learner.pk)
        # Under the learner's lock, as placing and lifting a hold take it: the hold read here
        # is the one in force when the data goes.
        waiting = erasure_wait(learner, today=today or timezone.localdate())
        if waiting == ERASURE_WAITS_FOR_ALERT:
            raise ErasureAlertWaiting
        if waiting == ERASURE_WAITS_FOR_LIFT:
            raise ErasureHeld
        # Each app forgets its own part through its services, all inside this transaction:
        # the learner goes entirely with the audit event, or nothing goes.
        try:
            # First, before anything is written: it locks the attempts, and refuses while a
            # submission is being sent (that would store results after the erasure).
            kept = attempts_forget_learner(learner=learner)
        except AttemptBeingSent as sending:
            raise ErasureDeferred from sending
        now = timezone.now()
        token = _anonymous_username(learner)

        learner.username = token
        learner.first_name = learner.last_name = learner.email = ""
        learner.dob = None
        learner.upstream_user_id = None
        learner.status = Learner.Status.ERASED
        learner.erased_at = learner.erased_at or now
        learner.save()

        user = learner.user
        user.username = token
        user.first_name = user.last_name = user.email = ""
        user.set_unusable_password()  # also ends every session (the session hash changes)
        user.is_active = False
        user.last_login = None
        user.save()

        # Follow-up notes are free text about the learner, and an erased learner cannot be
        # followed up: the items go entirely.
        followups_forget_learner(learner=learner)
        # The bulk-registration file's row still names the learner.
        import_rows_forget(learner=learner)
        # Alerts keep their timings for the safeguarding figures, and nothing that leads back
        # to the learner.
        alerts_forget_learner(learner=learner)
        # A hold's reason is free text about the learner, and there is nothing left to hold.
        RecordsHold.objects.filter(learner=learner).delete()
        # The card, and when and on which device it was used, are records of the learner too.
        cards_forget_learner(learner=learner)
        # A linked school account keeps what its provider said (name, email, its id for
        # them), and a second factor its secret.
        sign_in_identities_forget(user.pk)
        _admin_history_forget(
            {Learner: [learner.pk], get_user_model(): [user.pk], **kept},
            token,
        )
        audit_record(actor=erased_by, address=address, action=action, learner=learner, **detail)
    logger.info(
        "Learner %s erased by %s",
        learner.pk,
        f"user {erased_by.pk}" if erased_by is not None else "the retention sweep",
    )
    return learner


def _anonymous_username(learner: Learner) -> str:
    """Return the sign-in name an erased learner keeps: "erased-<id>", unique."""
    if learner.status == Learner.Status.ERASED:
        return learner.username
    token = f"erased-{learner.pk}"
    taken = (
        get_user_model().objects.filter(username__iexact=token).exclude(pk=learner.user_id).exists()
        or Learner.objects.filter(username__iexact=token).exclude(pk=learner.pk).exists()
    )
    if taken:
        # Someone registered that very name: a random tail keeps the token unique.
        token = f"{token}-{secrets.token_hex(4)}"
    return token


def _admin_history_forget(objects: dict[type[Model], list[int]], token: str) -> None:
    """Replace the learner's name in the admin's history, which names objects by str()."""
    for model, ids in objects.items():
        if not ids:
            continue
        LogEntry.objects.filter(
            content_type=ContentType.objects.get_for_model(model),
            object_id__in=[str(pk) for pk in ids],
        ).update(object_repr=f"{model._meta.verbose_name} of {token}", change_message="")


def learner_data_export(
    *, learner: Learner, exported_by: AbstractBaseUser, address: str | None = None
) -> dict:
    """Return everything the portal holds about one learner as JSON data, audited."""
    export = _learner_data(learner)
    # After the data is read: the file lists the events before its own export.
    audit_record(
        actor=exported_by,
        address=address,
        action=AuditEvent.Action.LEARNER_EXPORTED,
        learner=learner,
    )
    return export


def _learner_data(learner: Learner) -> dict:
    """Collect everything the portal holds about one learner."""
    attempts = learner.attempts.select_related("result").prefetch_related(
        "answers", "result__focus_areas"
    )
    events = AuditEvent.objects.filter(Q(learner=learner) | Q(learner_ref=str(learner.pk)))
    user, registered_by = learner.user, learner.registered_by
    return {
        "format": EXPORT_FORMAT,
        "exported_at": _iso(timezone.now()),
        "learner": {
            "id": learner.pk,
            "username": learner.username,
            "first_name": learner.first_name,
            "last_name": learner.last_name,
            "email": learner.email,
            "dob": _iso(learner.dob),
            "level": learner.level,
            "level_name": learner.get_level_display(),
            "status": learner.status,
            "upstream_user_id": learner.upstream_user_id,
            "registered_at": _iso(learner.registered_at),
            "registered_by": registered_by.get_username() if registered_by else None,
            "erased_at": _iso(learner.erased_at),
        },
        # The password is held only as a one-way hash, and that is never exported.
        "sign_in_account": {
            "username": user.get_username(),
            "active": user.is_active,
            "can_sign_in": user.is_active and user.has_usable_password(),
            "created_at": _iso(user.date_joined),
            "last_signed_in_at": _iso(user.last_login),
        },
        # A school account linked to the sign-in account, with what its provider said, and the
        # kinds of second factor (never their secrets).
        **sign_in_identities_export(user.pk),
        "assessments": [_attempt_export(attempt) for attempt in attempts],
        "audit_events": [
            {
                "at": _iso(event.at),
                "action": event.action,
                "description": event.get_action_display(),
                "by": event.actor_username,
                "detail": event.detail,
            }
            for event in events.order_by("at", "id")
        ],
        "follow_ups": followups_export(learner=learner),
        "records_hold": _hold_export(learner),
        "held_elsewhere": str(UPSTREAM_COPY_NOTE),
    }


def _hold_export(learner: Learner) -> dict | None:
    """Return what staff decided about holding the learner's records, if anything."""
    hold = RecordsHold.objects.filter(learner=learner).select_related("placed_by", "lifted_by")
    record = hold.first()
    if record is None:
        return None
    return {
        "placed_at": _iso(record.placed_at),
        "placed_by": record.placed_by.get_username() if record.placed_by else None,
        "reason": record.reason,
        "automatic_hold_lifted_at": _iso(record.lifted_at),
        "automatic_hold_lifted_by": record.lifted_by.get_username() if record.lifted_by else None,
        "reason_for_lifting": record.lift_reason,
    }


def _attempt_export(attempt: AssessmentAttempt) -> dict:
    """Return one attempt with its questions, the chosen answers as text, and its results."""
    chosen = {answer.question_id: answer for answer in attempt.answers.all()}
    questions = []
    for question in attempt.questions:
        offered = {option.id: option.copy for option in question.answers}
        questions.append(
            {
                "id": question.id,
                "text": question.text,
                "group": question.group,
                "answers_offered": list(offered.values()),
                "chosen_answer": _answer_export(chosen.pop(question.id, None), offered),
            }
        )
    # Answers whose question is no longer in the stored content are still held: list them too.
    questions += [
        {"id": question_id, "text": None, "group": None, "answers_offered": [],
         "chosen_answer": _answer_export(answer, {})}
        for question_id, answer in chosen.items()
    ]  # fmt: skip
    result = getattr(attempt, "result", None)
    return {
        "assessment_id": attempt.assessment_id,
        "assessment_version": attempt.assessment_version,
        "title": attempt.title,
        "level": attempt.level,
        "version": _number(attempt.version),
        "target_group": attempt.target_group,
        "preassess": attempt.preassess,
        "status_when_offered": attempt.offer_status,
        "state": attempt.state,
        "state_name": attempt.get_state_display(),
        "offered_at": _iso(attempt.offered_at),
        "started_at": _iso(attempt.started_at),
        "last_saved_at": _iso(attempt.last_saved_at),
        "submitted_at": _iso(attempt.submitted_at),
        "completed_at": _iso(attempt.completed_at),
        "last_problem": attempt.last_error,
        "questions": questions,
        "results": _result_export(result) if result is not None else None,
    }


def _answer_export(answer: AttemptAnswer | None, offered: dict[str, str]) -> dict | None:
    if answer is None:
        return None
    return {
        "id": answer.answer_id,
        "text": offered.get(answer.answer_id),
        "saved_at": _iso(answer.saved_at),
    }


def _result_export(result: AssessmentResult) -> dict:
    # The sanitized HTML is what the portal shows; the raw copy is the same text from the
    # upstream with its hostile markup, so it stays out of a file meant to be opened.
    return {
        "received_at": _iso(result.received_at),
        "loa_score": _number(result.loa_score),
        "risk_level": result.risk_level,
        "trait_title": result.trait_title,
        "trait_copy": result.trait_copy,
        "trait_signs_html": result.trait_signs_html,
        "trait_tips_html": result.trait_tips_html,
        "result_description_html": result.result_description_html,
        "focus_areas": [
            {
                "name": area.name,
                "needs_help": area.needs_help,
                "needs_help_flagged": area.needs_help_flagged,
                "questions_count": area.questions_count,
            }
            for area in result.focus_areas.all()
        ],
    }


def _iso(value: date | datetime | None) -> str | None:
    """Return a date or time in ISO 8601, or None."""
    return value.isoformat() if value is not None else None


def _number(value) -> str | None:
    """Return a decimal as exact text (JSON floats would round it), or None."""
    return format(value.normalize(), "f") if value is not None else None
