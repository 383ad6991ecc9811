"""Reads of learners shared by staff pages."""

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from assessments.models import AssessmentAttempt, AssessmentResult
from learners.models import Learner


def learner_list(*, query: str = "", level: str = "") -> QuerySet[Learner]:
    """Return registered learners matching a search and level, with their latest attempt."""
    learners = Learner.objects.filter(status=Learner.Status.ACTIVE)
    for word in query.split()[:5]:
        # Every word must match somewhere, so "Amira Khan" finds Amira Khan.
        learners = learners.filter(
            Q(username__icontains=word)
            | Q(first_name__icontains=word)
            | Q(last_name__icontains=word)
            | Q(email__icontains=word)
        )
    if level:
        learners = learners.filter(level=level)
    latest = AssessmentAttempt.objects.filter(learner=OuterRef("pk")).order_by("-offered_at", "-id")
    # The latest results stay visible while a newer assessment is under way.
    latest_result = AssessmentResult.objects.filter(attempt__learner=OuterRef("pk")).order_by(
        "-received_at", "-id"
    )
    return learners.annotate(
        latest_state=Subquery(latest.values("state")[:1]),
        latest_risk_level=Subquery(latest_result.values("risk_level")[:1]),
    ).order_by("last_name", "first_name", "username")


def learner_attempts(learner: Learner) -> list[AssessmentAttempt]:
    """Return a learner's attempts, newest first, with results and focus areas loaded."""
    return list(learner.attempts.select_related("result").prefetch_related("result__focus_areas"))


def latest_result(attempts: list[AssessmentAttempt]) -> AssessmentResult | None:
    """Return the results of the newest completed attempt among `learner_attempts`."""
    completed = (a for a in attempts if a.state == AssessmentAttempt.State.COMPLETED)
    return next((a.result for a in completed), None)


# A registration still pending after this long was cut off (the process died mid-call).
PENDING_REGISTRATION_STALE_AFTER = timedelta(minutes=10)


def stale_pending_registrations(username: str) -> QuerySet[Learner]:
    """Return pending registrations of this username left behind by a dead process."""
    cutoff = timezone.now() - PENDING_REGISTRATION_STALE_AFTER
    return Learner.objects.filter(
        username__iexact=username, status=Learner.Status.PENDING, registered_at__lt=cutoff
    )


def username_taken(username: str) -> bool:
    """Return whether a sign-in account already uses this username, in any case."""
    stale = stale_pending_registrations(username).values("user_id")
    return get_user_model().objects.filter(username__iexact=username).exclude(pk__in=stale).exists()
