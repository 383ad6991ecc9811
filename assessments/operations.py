"""Operations: submissions that need attention, and how the upstream has been failing."""

from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from assessments import delivery
from assessments.models import AssessmentAttempt
from audit.models import AuditEvent
from audit.services import audit_record
from partner_api.models import UpstreamFailure

State = AssessmentAttempt.State

RECENT = timedelta(hours=24)


def attempts_needing_attention(
    school_ids: list[int] | None = None,
) -> QuerySet[AssessmentAttempt]:
    """Return attempts waiting to be sent, refused, in flight, or submitted without results.

    Of those schools' learners (None: every school).
    """
    attempts = AssessmentAttempt.objects.all()
    if school_ids is not None:
        attempts = attempts.filter(learner__school_id__in=school_ids)
    return (
        attempts.filter(
            Q(state__in=[State.SUBMIT_PENDING, State.REJECTED, State.SUBMITTING])
            | Q(state=State.SUBMITTED, result__isnull=True)
        )
        .select_related("learner")
        .order_by("state_changed_at", "pk")
    )


def upstream_failures_by_endpoint(*, since=None) -> list[dict]:
    """Count recent failed upstream calls per endpoint, with the latest time of each."""
    since = since or timezone.now() - RECENT
    return list(
        UpstreamFailure.objects.filter(at__gte=since)
        .values("endpoint")
        .annotate(failures=Count("id"), latest=Max("at"))
        .order_by("-failures", "endpoint")
    )


def attempt_retry_now(
    *, attempt: AssessmentAttempt, retried_by: AbstractBaseUser, address: str | None = None
) -> AssessmentAttempt:
    """Try a stuck step again at once, audited: deliver a pending submission or fetch results."""
    audit_record(
        actor=retried_by,
        address=address,
        action=AuditEvent.Action.SUBMISSION_RETRIED,
        learner=attempt.learner,
        assessment_id=attempt.assessment_id,
        state_before=attempt.state,
    )
    # Looked up on the module at call time, as the learner's views do, so that whatever
    # stands in for delivery (a test's failing upstream) is the same for every caller.
    if attempt.state == State.SUBMIT_PENDING:
        delivery.attempt_deliver(attempt_id=attempt.pk, force=True)
    elif attempt.state == State.SUBMITTED:
        delivery.attempt_fetch_results(attempt=attempt)
    attempt.refresh_from_db()
    return attempt
