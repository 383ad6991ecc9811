"""The assessment flow: offer, content, answers, submission and results.

Each function saves locally first, then calls the upstream, then records the outcome, so a
failure in the middle never loses a learner's answers.
"""

import logging

from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone

from assessments.models import (
    AssessmentAttempt,
    AssessmentResult,
    AttemptAnswer,
    FocusArea,
    fit,
)
from assessments.taking import saved_answers, unanswered_questions
from learners.models import Learner
from portal.partner_api import (
    AssessmentContent,
    PartnerApiError,
    PartnerApiRejected,
    Response,
    get_client,
)
from portal.sanitize import sanitize_html
from portal.upstream import failure_message

logger = logging.getLogger(__name__)

State = AssessmentAttempt.State

# Upstream refusals of a submission that sending the same thing again cannot fix; other
# refusals (such as 401 for a misconfigured key) leave the answers waiting to be sent.
SUBMISSION_REFUSED_STATUSES = frozenset({400, 404, 422})
ALREADY_SUBMITTED_STATUS = 409


class NothingToTake(Exception):
    """The upstream has no assessment for this learner now."""

    def __init__(self, offer_status: str = ""):
        super().__init__(offer_status)
        self.offer_status = offer_status


class AttemptClosed(Exception):
    """The attempt no longer accepts answers (it was submitted or is being submitted)."""


class IncompleteAnswers(Exception):
    """Some questions have no valid answer yet."""

    def __init__(self, missing: list[dict]):
        super().__init__(f"{len(missing)} question(s) unanswered")
        self.missing = missing


def attempt_start(*, learner: Learner) -> AssessmentAttempt:
    """Return the learner's open attempt, asking the upstream for the next one only if needed."""
    open_attempt = learner.attempts.filter(state=State.IN_PROGRESS).first()
    if open_attempt is not None:
        return open_attempt

    attempt = learner.attempts.filter(state=State.AVAILABLE).first()
    if attempt is None:
        offer = get_client().next_assessment(learner.upstream_user_id)
        if offer.assessment_id is None:
            raise NothingToTake(offer.status)
        attempt, created = AssessmentAttempt.objects.get_or_create(
            learner=learner,
            assessment_id=offer.assessment_id,
            defaults={
                "assessment_version": offer.assessment_version,
                "target_group": fit(AssessmentAttempt, "target_group", offer.target_group),
                "offer_status": fit(AssessmentAttempt, "offer_status", offer.status),
            },
        )
        if not created and not attempt.is_open:
            # The upstream still offers an assessment we already sent; it may not have
            # processed it yet. Nothing new to take.
            raise NothingToTake(offer.status)

    if not attempt.has_content:
        content = get_client().view_assessment(learner.upstream_user_id, attempt.assessment_id)
        _attempt_store_content(attempt, content)
    return attempt


def attempt_save_answers(*, attempt: AssessmentAttempt, choices: dict[str, str]) -> None:
    """Save the learner's choices (question id -> answer id) for an open attempt."""
    now = timezone.now()
    with transaction.atomic():
        locked = AssessmentAttempt.objects.select_for_update().get(pk=attempt.pk)
        if not locked.is_open:
            raise AttemptClosed
        if choices:
            AttemptAnswer.objects.bulk_create(
                [
                    AttemptAnswer(attempt=locked, question_id=q, answer_id=a, saved_at=now)
                    for q, a in choices.items()
                ],
                update_conflicts=True,
                unique_fields=["attempt", "question_id"],
                update_fields=["answer_id", "saved_at"],
            )
        locked.last_saved_at = now
        locked.state = State.IN_PROGRESS
        locked.save(update_fields=["last_saved_at", "state"])


def attempt_submit(*, attempt: AssessmentAttempt) -> AssessmentAttempt:
    """Send a complete set of answers upstream once, then fetch and store the results."""
    with transaction.atomic():
        locked = AssessmentAttempt.objects.select_for_update().get(pk=attempt.pk)
        # The row lock makes a double click or a second tab wait here, then see the new state.
        if locked.state not in (State.IN_PROGRESS, State.AVAILABLE, State.SUBMIT_PENDING):
            raise AttemptClosed
        answers = saved_answers(locked)
        missing = unanswered_questions(locked, answers)
        if missing or not locked.has_content:
            raise IncompleteAnswers(missing)
        locked.state = State.SUBMITTING
        locked.submitted_at = timezone.now()
        locked.save(update_fields=["state", "submitted_at"])

    responses = [
        Response(question_id=question["id"], answer_id=answers[question["id"]])
        for question in locked.questions
    ]
    try:
        get_client().submit_assessment(locked.learner.upstream_user_id, locked.session, responses)
    except PartnerApiRejected as error:
        if error.status == ALREADY_SUBMITTED_STATUS:
            logger.info("Attempt %s was already submitted upstream", locked.pk)
        elif error.status in SUBMISSION_REFUSED_STATUSES:
            return _attempt_set_state(locked, State.REJECTED, failure_message(error))
        else:
            return _attempt_set_state(locked, State.SUBMIT_PENDING, failure_message(error))
    except PartnerApiError as error:
        # Timeout, dropped connection, 5xx: the upstream may or may not have it.
        logger.warning("Submission of attempt %s is pending: %s", locked.pk, error)
        return _attempt_set_state(locked, State.SUBMIT_PENDING, failure_message(error))

    _attempt_set_state(locked, State.SUBMITTED, "")
    attempt_fetch_results(attempt=locked)
    return locked


def attempt_resend(*, attempt: AssessmentAttempt) -> AssessmentAttempt:
    """Deliver a pending submission, first checking whether the earlier one went through."""
    if attempt.state != State.SUBMIT_PENDING:
        raise AttemptClosed
    try:
        attempt_fetch_results(attempt=attempt, raise_errors=True)
    except PartnerApiRejected:
        pass  # no results upstream: the earlier submission did not arrive
    except PartnerApiError as error:
        return _attempt_set_state(attempt, State.SUBMIT_PENDING, failure_message(error))
    else:
        return attempt
    return attempt_submit(attempt=attempt)


def attempt_refresh_content(*, attempt: AssessmentAttempt) -> AssessmentAttempt:
    """Fetch a refused attempt's content again, keeping every answer that still fits."""
    if attempt.state != State.REJECTED:
        raise AttemptClosed
    content = get_client().view_assessment(attempt.learner.upstream_user_id, attempt.assessment_id)
    _attempt_store_content(attempt, content)
    valid = {
        question["id"]: {answer["id"] for answer in question["answers"]}
        for question in attempt.questions
    }
    stale = [
        answer.pk
        for answer in attempt.answers.all()
        if answer.answer_id not in valid.get(answer.question_id, set())
    ]
    AttemptAnswer.objects.filter(pk__in=stale).delete()
    return attempt


def attempt_fetch_results(
    *, attempt: AssessmentAttempt, raise_errors: bool = False
) -> AssessmentResult | None:
    """Fetch and store the results of a submitted attempt; None if they cannot be had now."""
    try:
        results = get_client().results(attempt.learner.upstream_user_id, attempt.assessment_id)
    except PartnerApiError as error:
        logger.info("Results of attempt %s not available: %s", attempt.pk, error)
        if raise_errors:
            raise
        attempt.last_error = failure_message(error)
        attempt.save(update_fields=["last_error"])
        return None

    try:
        with transaction.atomic():
            result = AssessmentResult.objects.create(
                attempt=attempt,
                loa_score=results.loa_score,
                risk_level=fit(AssessmentResult, "risk_level", results.risk_level),
                trait_title=results.trait_title,
                trait_copy=results.trait_copy,
                trait_signs_raw=results.trait_signs_html,
                trait_signs_html=sanitize_html(results.trait_signs_html),
                trait_tips_raw=results.trait_tips_html,
                trait_tips_html=sanitize_html(results.trait_tips_html),
                result_description_raw=results.result_description_html,
                result_description_html=sanitize_html(results.result_description_html),
            )
            FocusArea.objects.bulk_create(
                FocusArea(
                    result=result,
                    name=fit(FocusArea, "name", area.name),
                    needs_help=fit(FocusArea, "needs_help", area.needs_help),
                    questions_count=area.questions_count,
                    position=position,
                )
                for position, area in enumerate(results.focus_areas)
            )
            attempt.state = State.COMPLETED
            attempt.completed_at = timezone.now()
            attempt.last_error = ""
            attempt.save(update_fields=["state", "completed_at", "last_error"])
    except IntegrityError:
        # Another request stored these results first.
        return AssessmentResult.objects.get(attempt=attempt)
    except (DatabaseError, ArithmeticError, ValueError):
        # Results the database cannot hold must not turn every later visit into an error.
        logger.exception("Results of attempt %s could not be stored", attempt.pk)
        attempt.last_error = (
            "The results arrived but could not be stored. Your administrator has been told."
        )
        attempt.save(update_fields=["last_error"])
        return None
    return result


def _attempt_store_content(attempt: AssessmentAttempt, content: AssessmentContent) -> None:
    """Keep the fetched questions, session and info so every page is served locally."""
    info = content.info
    attempt.content = {
        "questions": [
            {
                "id": question.id,
                "text": question.text,
                "group": question.group,
                "display_order": question.display_order,
                "answers": [
                    {
                        "id": answer.id,
                        "copy": answer.copy,
                        "icon": answer.icon,
                        "display_order": answer.display_order,
                    }
                    for answer in question.answers
                ],
            }
            for question in content.questions
        ]
    }
    attempt.__dict__.pop("questions", None)  # drop the cached_property's old value
    attempt.session = content.session
    attempt.title = info.title
    attempt.level = fit(AssessmentAttempt, "level", info.level)
    attempt.version = info.version
    attempt.preassess = info.preassess
    attempt.state = State.IN_PROGRESS
    attempt.started_at = attempt.started_at or timezone.now()
    attempt.last_error = ""
    attempt.save()


def _attempt_set_state(attempt: AssessmentAttempt, state: str, error: str) -> AssessmentAttempt:
    """Record the outcome of an upstream call on the attempt."""
    attempt.state = state
    attempt.last_error = error
    attempt.save(update_fields=["state", "last_error"])
    return attempt
