"""Submission and results, exactly once, surviving upstream failures and restarts.

The database decides who may talk to the upstream about an attempt. Every change of state is
a conditional update from the state the caller saw, so two tabs, a double click, a worker and
a staff member's "retry now" can never act on the same attempt at once, and a stale copy can
never undo a newer state. An ambiguous failure (timeout, dropped connection, 5xx, 429, an
unreadable reply) leaves it `submit_pending`; delivery first asks for the results (if they can
be read, the earlier submission arrived) and only then sends again. Once the upstream has
accepted a submission (a readable 2xx, or 409 "already submitted") it is never sent again.
What the upstream answered (a submission accepted or refused, results) is held through a
database outage and recorded once the database is back (ops.database).
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy

from assessments.models import AssessmentAttempt, AssessmentResult, FocusArea, fit
from assessments.services import AttemptClosed
from assessments.signals import result_stored
from assessments.taking import saved_answers, unanswered_questions
from kit.sanitize import sanitize_html
from ops.database import DATABASE_TROUBLE, write_when_database_returns
from partner_api import (
    AssessmentResults,
    PartnerApiError,
    PartnerApiRejected,
    Question,
    Response,
    get_client,
)
from partner_api.upstream import failure_reason_lazy, text_to_store

logger = logging.getLogger(__name__)

State = AssessmentAttempt.State

# Upstream refusals of a submission that sending the same thing again cannot fix. Other
# refusals (401 for a misconfigured key, 404 for a learner the upstream lost) leave the answers
# waiting to be sent, visible on the operations page.
SUBMISSION_REFUSED_STATUSES = frozenset({400, 422})
# The spec gives no status for a second submission; a strict upstream answers 409, which
# means the earlier one arrived.
ALREADY_SUBMITTED_STATUS = 409

# Kept in the attempt's last_error in the source language, translated when shown
# (partner_api.upstream.text_to_store).
RESULTS_NOT_READY = gettext_lazy("The assessment service has not made the results available yet.")
RESULTS_NOT_STORED = gettext_lazy(
    "The results arrived but could not be stored. Your administrator has been told."
)


class IncompleteAnswers(Exception):
    """Some questions have no valid answer yet."""

    def __init__(self, missing: list[Question]):
        super().__init__(f"{len(missing)} question(s) unanswered")
        self.missing = missing


def attempt_submit(*, attempt: AssessmentAttempt) -> AssessmentAttempt:
    """Send a learner's complete answers once, then fetch and store the results."""
    with transaction.atomic():
        # The row lock makes a double click or a second tab wait here, then see the new state.
        locked = AssessmentAttempt.objects.select_for_update().get(pk=attempt.pk)
        if not locked.is_open:
            raise AttemptClosed
        missing = unanswered_questions(locked, saved_answers(locked))
        if missing or not locked.has_content:
            raise IncompleteAnswers(missing)
        now = timezone.now()
        locked.state = State.SUBMITTING
        locked.submitted_at = now
        locked.state_changed_at = now
        locked.delivery_attempts = 0
        locked.next_attempt_at = None
        locked.save(
            update_fields=[
                "state", "submitted_at", "state_changed_at", "delivery_attempts",
                "next_attempt_at",
            ]
        )  # fmt: skip
    return _send(locked)


def attempt_deliver(*, attempt_id: int, force: bool = False) -> AssessmentAttempt | None:
    """Deliver a pending submission, unless the earlier one turns out to have arrived."""
    now = timezone.now()
    if force:
        # Even on request, not straight after a failed send: a slow upstream may still be
        # processing it, and reconciling too early would send it a second time.
        quiet = timedelta(seconds=settings.SUBMISSION_QUIET_PERIOD)
        due = Q(state_changed_at__isnull=True) | Q(state_changed_at__lte=now - quiet)
    else:
        due = Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now)
    claimed = AssessmentAttempt.objects.filter(
        due, pk=attempt_id, state=State.SUBMIT_PENDING
    ).update(state=State.SUBMITTING, state_changed_at=now)
    if not claimed:
        return None  # delivered, refused, not yet due, or someone else is on it
    attempt = AssessmentAttempt.objects.select_related("learner").get(pk=attempt_id)
    if AssessmentResult.objects.filter(attempt=attempt).exists():
        return _record(attempt, State.COMPLETED, "")  # the results are already here
    try:
        results = get_client().results(attempt.learner.upstream_user_id, attempt.assessment_id)
    except PartnerApiRejected:
        pass  # no results upstream: the earlier submission did not arrive
    except PartnerApiError as error:
        return _retry_later(attempt, State.SUBMIT_PENDING, failure_reason_lazy(error), error)
    else:
        logger.info("Attempt %s had arrived upstream; completing without resending", attempt.pk)
        _store_results_held(attempt, results)
        return attempt
    return _send(attempt)


def attempt_fetch_results(*, attempt: AssessmentAttempt) -> AssessmentResult | None:
    """Fetch and store a submitted attempt's results; None (and a retry later) if not now."""
    if attempt.state != State.SUBMITTED:
        return None
    try:
        results = get_client().results(attempt.learner.upstream_user_id, attempt.assessment_id)
    except PartnerApiError as error:
        logger.info("Results of attempt %s not available: %s", attempt.pk, error)
        if isinstance(error, PartnerApiRejected):
            message = RESULTS_NOT_READY
        else:
            message = failure_reason_lazy(error)
        _retry_later(attempt, State.SUBMITTED, message, error)
        return None
    return _store_results_held(attempt, results)


def attempt_fetch_results_when_due(*, attempt_id: int) -> AssessmentResult | None:
    """Background entry: fetch results of a submitted attempt if it still has none."""
    attempt = AssessmentAttempt.objects.select_related("learner").get(pk=attempt_id)
    if attempt.next_attempt_at and attempt.next_attempt_at > timezone.now():
        return None
    return attempt_fetch_results(attempt=attempt)


def attempts_sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Re-queue what is due or stuck; the worker or cron runs this every minute."""
    from assessments import tasks

    now = now or timezone.now()
    stuck_before = now - timedelta(seconds=settings.SUBMISSION_STUCK_AFTER)
    # A process that died mid-call leaves `submitting` behind: whether the upstream got it
    # is unknown, so it becomes pending and delivery reconciles first.
    unstuck = AssessmentAttempt.objects.filter(
        state=State.SUBMITTING, state_changed_at__lt=stuck_before
    ).update(state=State.SUBMIT_PENDING, state_changed_at=now, next_attempt_at=now)
    due = Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now)
    pending = list(
        AssessmentAttempt.objects.filter(due, state=State.SUBMIT_PENDING).values_list(
            "pk", flat=True
        )
    )
    awaiting_results = list(
        AssessmentAttempt.objects.filter(
            due, state=State.SUBMITTED, result__isnull=True
        ).values_list("pk", flat=True)
    )
    for attempt_id in pending:
        tasks.enqueue_delivery(attempt_id)
    for attempt_id in awaiting_results:
        tasks.enqueue_results_fetch(attempt_id)
    return {"unstuck": unstuck, "deliveries": len(pending), "results": len(awaiting_results)}


def retry_delay(attempts: int, retry_after: float | None = None) -> timedelta:
    """Return how long to wait before background try number `attempts` + 1."""
    seconds = min(
        settings.DELIVERY_RETRY_CAP, settings.DELIVERY_RETRY_BASE * 2 ** max(attempts - 1, 0)
    )
    if retry_after:
        seconds = max(seconds, min(retry_after, settings.DELIVERY_RETRY_CAP))
    return timedelta(seconds=seconds)


def _send(attempt: AssessmentAttempt) -> AssessmentAttempt:
    """Send the claimed attempt's answers and record what the upstream said."""
    answers = saved_answers(attempt)
    responses = [
        Response(question_id=question.id, answer_id=answers[question.id])
        for question in attempt.questions
    ]
    try:
        receipt = get_client().submit_assessment(
            attempt.learner.upstream_user_id, attempt.session, responses
        )
    except PartnerApiRejected as error:
        if error.status in SUBMISSION_REFUSED_STATUSES:
            reason = failure_reason_lazy(error)
            return write_when_database_returns(
                lambda: _record(attempt, State.REJECTED, reason),
                what=f"attempt {attempt.pk}'s refused submission",
            )
        if error.status != ALREADY_SUBMITTED_STATUS:
            return _retry_later(attempt, State.SUBMIT_PENDING, failure_reason_lazy(error), error)
        logger.info("Attempt %s was already submitted upstream", attempt.pk)
    except PartnerApiError as error:
        # Timeout, dropped connection, 5xx, 429: the upstream may or may not have it.
        logger.warning("Submission of attempt %s is pending: %s", attempt.pk, error)
        return _retry_later(attempt, State.SUBMIT_PENDING, failure_reason_lazy(error), error)
    else:
        if isinstance(receipt.body, str):
            # A success status with a body that is not JSON (an error page from a proxy,
            # say) confirms nothing: believe it only once the results can be read.
            return _confirm_by_results(attempt)

    write_when_database_returns(
        lambda: _record(attempt, State.SUBMITTED, "", delivery_attempts=0, next_attempt_at=None),
        what=f"attempt {attempt.pk}'s accepted submission",
    )
    attempt_fetch_results(attempt=attempt)
    return attempt


def _confirm_by_results(attempt: AssessmentAttempt) -> AssessmentAttempt:
    """Complete the attempt if its results exist; otherwise keep it waiting to be sent."""
    try:
        results = get_client().results(attempt.learner.upstream_user_id, attempt.assessment_id)
    except PartnerApiError as error:
        message = gettext_lazy(
            "The assessment service's reply could not be read, and the answers do not seem "
            "to have arrived yet."
        )
        return _retry_later(attempt, State.SUBMIT_PENDING, message, error)
    _store_results_held(attempt, results)
    return attempt


def _retry_later(
    attempt: AssessmentAttempt, state: str, message: object, error: PartnerApiError | None = None
) -> AssessmentAttempt:
    """Record a failed step and queue the next try with backoff."""
    from assessments import tasks

    tries = attempt.delivery_attempts + 1
    when = timezone.now() + retry_delay(tries, getattr(error, "retry_after", None))
    _record(attempt, state, message, delivery_attempts=tries, next_attempt_at=when)
    if attempt.state != state:
        return attempt  # someone else moved it meanwhile: their outcome stands
    if state == State.SUBMIT_PENDING:
        tasks.enqueue_delivery(attempt.pk, run_after=when)
    else:
        tasks.enqueue_results_fetch(attempt.pk, run_after=when)
    return attempt


def _record(attempt: AssessmentAttempt, state: str, error: object, **fields) -> AssessmentAttempt:
    """Move the attempt from the state this caller saw to `state`, unless it moved meanwhile."""
    values = {
        "state": state,
        "last_error": text_to_store(error),
        "state_changed_at": timezone.now(),
        **fields,
    }
    moved = AssessmentAttempt.objects.filter(pk=attempt.pk, state=attempt.state).update(**values)
    if moved:
        for name, value in values.items():
            setattr(attempt, name, value)
    else:
        logger.info("Attempt %s changed meanwhile; keeping its newer state", attempt.pk)
        attempt.refresh_from_db()
    return attempt


def _store_results_held(
    attempt: AssessmentAttempt, results: AssessmentResults
) -> AssessmentResult | None:
    """Store results the upstream gave, holding them through a database outage."""
    return write_when_database_returns(
        lambda: _store_results(attempt, results), what=f"attempt {attempt.pk}'s results"
    )


def _store_results(
    attempt: AssessmentAttempt, results: AssessmentResults
) -> AssessmentResult | None:
    """Store results (HTML sanitized once, here) and complete the attempt."""
    if attempt.learner.status == attempt.learner.Status.ERASED:
        return None  # erased while the results were on their way: keep nothing of them
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
            result_stored.send(sender=AssessmentResult, result=result)
    except IntegrityError:
        # Another request or worker stored these results first (or an earlier try of this
        # one, whose commit's reply was lost).
        result = AssessmentResult.objects.get(attempt=attempt)
    except DATABASE_TROUBLE:
        raise  # the database's trouble, not the results': the caller holds them
    except (DatabaseError, ArithmeticError, ValueError):
        # Results the database cannot hold must not turn every later visit into an error;
        # they exist upstream, so the attempt was submitted: try storing them again later.
        logger.exception("Results of attempt %s could not be stored", attempt.pk)
        _retry_later(attempt, State.SUBMITTED, RESULTS_NOT_STORED)
        return None
    # A stored result means a completed attempt, whichever state this caller saw.
    completed_at = timezone.now()
    AssessmentAttempt.objects.filter(pk=attempt.pk).exclude(state=State.COMPLETED).update(
        state=State.COMPLETED,
        completed_at=completed_at,
        state_changed_at=completed_at,
        last_error="",
        next_attempt_at=None,
    )
    attempt.refresh_from_db()
    return result
