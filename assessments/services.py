"""The assessment flow up to submission: offer, content, answers; and forgetting a learner's.

Each function saves locally first, then calls the upstream, then records the outcome, so a
failure in the middle never loses a learner's answers. Submission and results are in
`assessments.delivery`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from django.db import transaction
from django.db.models import Model, Q
from django.db.transaction import TransactionManagementError
from django.utils import timezone
from django.utils.translation import gettext_lazy

from accounts.access import safeguarding_ready
from assessments.media import content_media_wanted
from assessments.models import AssessmentAttempt, AssessmentResult, AttemptAnswer, fit
from assessments.taking import attempt_level, one_per_screen_now
from partner_api import AssessmentContent, get_client
from partner_api.upstream import text_to_store

if TYPE_CHECKING:  # annotations only: the learners app sits above this one
    from learners.models import Learner

logger = logging.getLogger(__name__)

State = AssessmentAttempt.State

# Stored as the attempt's last problem in the source language, translated when shown
# (partner_api.upstream.text_to_store).
STOPPED_BY_ERASURE = gettext_lazy("Not finished: the learner's personal data was erased first.")


class AssessmentsNotOpen(Exception):
    """No designated safeguarding lead can be told about a result yet: nothing may start."""


class LearnerLeft(Exception):
    """The school's records say the learner left: they start no assessment."""


class NothingToTake(Exception):
    """The upstream has no assessment for this learner now."""

    def __init__(self, offer_status: str = ""):
        super().__init__(offer_status)
        self.offer_status = offer_status


class AttemptClosed(Exception):
    """The attempt is not in a state that allows this (e.g. its answers were already sent)."""


class AttemptBeingSent(Exception):
    """A learner's answers are being sent right now: their attempts cannot be forgotten yet."""


def attempt_start(*, learner: Learner) -> AssessmentAttempt:
    """Return the learner's current attempt, asking the upstream for the next one only if needed.

    Raises LearnerLeft for a learner who left the school (their account is normally closed).
    """
    if learner.left_at is not None:
        raise LearnerLeft
    current = learner.attempts.filter(state__in=AssessmentAttempt.UNFINISHED_STATES).first()
    if current is not None:
        return current
    if not safeguarding_ready(learner.school_id):
        # A result that needs help must reach a named adult: with no DSL to email, no new
        # assessment starts (one already started may still be finished and sent).
        raise AssessmentsNotOpen

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
        attempt = _attempt_fetch_content(attempt)
    return attempt


class AttemptRow(Protocol):
    """An attempt as far as saving answers needs it: a full row, or a page's snapshot."""

    pk: int


def attempt_save_answers(*, attempt: AttemptRow, choices: dict[str, str]) -> None:
    """Save the learner's choices (question id -> answer id) for an open attempt."""
    now = timezone.now()
    with transaction.atomic():
        # The update locks the row as a submission's select_for_update does, and finds it
        # still open, without reading its content: one of them waits for the other's commit.
        updated = AssessmentAttempt.objects.filter(
            pk=attempt.pk, state__in=AssessmentAttempt.OPEN_STATES
        ).update(last_saved_at=now, state=State.IN_PROGRESS)
        if not updated:
            raise AttemptClosed
        if choices:
            AttemptAnswer.objects.bulk_create(
                [
                    AttemptAnswer(attempt_id=attempt.pk, question_id=q, answer_id=a, saved_at=now)
                    for q, a in choices.items()
                ],
                update_conflicts=True,
                unique_fields=["attempt", "question_id"],
                update_fields=["answer_id", "saved_at"],
            )


def attempt_refresh_content(*, attempt: AssessmentAttempt) -> AssessmentAttempt:
    """Fetch a refused attempt's content again, keeping every answer that still fits."""
    if attempt.state != State.REJECTED:
        raise AttemptClosed
    content = get_client().view_assessment(attempt.learner.upstream_user_id, attempt.assessment_id)
    with transaction.atomic():
        # Another tab may have refreshed, sent and completed it while we were fetching.
        locked = AssessmentAttempt.objects.select_for_update().get(pk=attempt.pk)
        if locked.state != State.REJECTED:
            raise AttemptClosed
        _attempt_store_content(locked, content)
        valid = {
            question.id: {answer.id for answer in question.answers} for question in locked.questions
        }
        stale = [
            answer.pk
            for answer in locked.answers.all()
            if answer.answer_id not in valid.get(answer.question_id, set())
        ]
        AttemptAnswer.objects.filter(pk__in=stale).delete()
    return locked


def _attempt_fetch_content(attempt: AssessmentAttempt) -> AssessmentAttempt:
    """Fetch an offered attempt's content once, even if two requests ask at the same time."""
    content = get_client().view_assessment(attempt.learner.upstream_user_id, attempt.assessment_id)
    with transaction.atomic():
        locked = AssessmentAttempt.objects.select_for_update().get(pk=attempt.pk)
        if locked.state == State.AVAILABLE and not locked.has_content:
            _attempt_store_content(locked, content)
    return locked


def _attempt_store_content(attempt: AssessmentAttempt, content: AssessmentContent) -> None:
    """Keep the fetched questions, session and info so every page is served locally."""
    info = content.info
    attempt.set_questions(content.questions)
    attempt.session = content.session
    attempt.title = info.title
    attempt.level = fit(AssessmentAttempt, "level", info.level)
    attempt.version = info.version
    attempt.preassess = info.preassess
    # Fixed now: a school changing the setting mid-attempt must not renumber its pages.
    learner = attempt.learner
    level = attempt_level(attempt.level, learner.level)
    attempt.one_per_screen = one_per_screen_now(level, learner.school_id)
    attempt.state = State.IN_PROGRESS
    attempt.state_changed_at = timezone.now()
    attempt.started_at = attempt.started_at or attempt.state_changed_at
    attempt.last_error = ""
    attempt.save(
        update_fields=[
            "content", "session", "title", "level", "version", "preassess", "one_per_screen",
            "state", "state_changed_at", "started_at", "last_error",
        ]
    )  # fmt: skip
    content_media_wanted(content.questions)


def attempts_forget_learner(*, learner: Learner) -> dict[type[Model], list[int]]:
    """Forget an erased learner's answers, content, sessions and results' text; return kept ids."""
    # Part of the learner's erasure (privacy.services.learner_erase), in its one transaction:
    # the lock below must hold until the learner is erased, and SQLite would not refuse it
    # outside a transaction as PostgreSQL does.
    if not transaction.get_connection().in_atomic_block:
        raise TransactionManagementError("attempts_forget_learner runs inside an erasure")
    locked = AssessmentAttempt.objects.select_for_update().filter(learner=learner)
    # A send in flight would store results (with their free text) after the erasure.
    # `submitting` lasts one upstream call; the sweep turns a stuck one into pending.
    if any(attempt.state == State.SUBMITTING for attempt in locked):
        raise AttemptBeingSent
    now = timezone.now()
    attempts = AssessmentAttempt.objects.filter(learner=learner)
    attempts.update(content={}, session="", last_error="")
    # Delivery needs the answers and the learner's upstream id, both gone: stop it for good, or
    # the sweep would keep retrying (and a late results fetch would bring free text back).
    attempts.filter(
        Q(state=State.SUBMIT_PENDING) | Q(state=State.SUBMITTED, result__isnull=True)
    ).update(
        state=State.REJECTED,
        last_error=text_to_store(STOPPED_BY_ERASURE),
        state_changed_at=now,
        next_attempt_at=None,
    )
    AttemptAnswer.objects.filter(attempt__learner=learner).delete()
    # Scores, risk levels and focus areas stay, anonymous, for the counts.
    results = AssessmentResult.objects.filter(attempt__learner=learner)
    results.update(
        trait_title="",
        trait_copy="",
        trait_signs_raw="",
        trait_signs_html="",
        trait_tips_raw="",
        trait_tips_html="",
        result_description_raw="",
        result_description_html="",
    )
    # The rows kept still name the learner in the admin's history (str() of each): the caller
    # renames them there with the learner's new token.
    return {
        AssessmentAttempt: list(attempts.values_list("pk", flat=True)),
        AssessmentResult: list(results.values_list("pk", flat=True)),
    }
