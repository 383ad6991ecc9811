"""Staff pages about the assessment flow itself: the operations view."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.access import in_working_schools, whole_school_required, working_school_ids
from assessments.models import AssessmentAttempt
from assessments.operations import (
    attempt_retry_now,
    attempts_needing_attention,
    upstream_failures_by_endpoint,
)
from kit.addresses import client_address
from partner_api.models import UpstreamFailure

RECENT_FAILURES_SHOWN = 20


@whole_school_required
def operations(request: HttpRequest) -> HttpResponse:
    """List submissions needing attention and recent upstream failures."""
    return render(
        request,
        "assessments/operations.html",
        {
            "attempts": attempts_needing_attention(working_school_ids(request.user)),
            "failures_by_endpoint": upstream_failures_by_endpoint(),
            "recent_failures": UpstreamFailure.objects.all()[:RECENT_FAILURES_SHOWN],
        },
    )


@whole_school_required
@require_POST
def retry_attempt(request: HttpRequest, attempt_pk: int) -> HttpResponse:
    """Retry a pending delivery or a missing results fetch now."""
    # Another school's attempt is not there, as its learner is not.
    attempts = in_working_schools(
        request.user, AssessmentAttempt.objects.select_related("learner"), "learner__school_id"
    )
    attempt = get_object_or_404(attempts, pk=attempt_pk)
    attempt = attempt_retry_now(
        attempt=attempt, retried_by=request.user, address=client_address(request)
    )
    messages.info(
        request,
        _("%(name)s's assessment #%(assessment_id)s is now: %(state)s.")
        % {
            "name": attempt.learner.display_name,
            "assessment_id": attempt.assessment_id,
            "state": attempt.get_state_display(),
        },
    )
    return redirect("operations")
