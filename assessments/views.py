"""The learner's pages around the taking flow: my assessments, starting, results, resending."""

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.access import learner_required, safeguarding_ready
from accounts.idle import learner_keep_alive, not_activity
from assessments import delivery, services
from assessments.child_words import PRIMARY, learner_failure_message, wording_for
from assessments.learner_results import results_page
from assessments.models import AssessmentAttempt
from assessments.taking import current_attempt, results_snapshot
from assessments.taking_views import attempt_for_learner
from partner_api import PartnerApiError
from partner_api.upstream import failure_message_tags
from schools.models import PartnerSettings

State = AssessmentAttempt.State


@learner_required
def my_assessments(request: HttpRequest) -> HttpResponse:
    """List the learner's assessments: the one to start or resume, and past results."""
    attempts = list(request.learner.attempts.select_related("result"))
    finished = [a for a in attempts if a.state in AssessmentAttempt.FINISHED_STATES]
    current = current_attempt(attempts)
    return render(
        request,
        "assessments/my_assessments.html",
        {
            "attempts": attempts,
            "current": current,
            # Nothing new starts until a safeguarding lead can be told (services.attempt_start).
            "not_open": current is None and not safeguarding_ready(request.learner.school_id),
            "left_school": request.learner.left_at is not None,
            "finished": finished,
            "latest": finished[0] if finished else None,
            "results_hidden": PartnerSettings.current().hide_results_from_learners,
            "primary": wording_for(request.learner.level) == PRIMARY,
        },
    )


@learner_required
@require_POST
def start(request: HttpRequest) -> HttpResponse:
    """Start (or resume) the learner's next assessment."""
    try:
        attempt = services.attempt_start(learner=request.learner)
    except services.LearnerLeft:
        return render(request, "assessments/left_school.html")
    except services.AssessmentsNotOpen:
        return render(request, "assessments/not_open.html")
    except services.NothingToTake:
        messages.info(request, _("There is no assessment for you to take right now."))
        return redirect("assessments:my_assessments")
    except PartnerApiError as error:
        message = learner_failure_message(error, wording_for(request.learner.level))
        messages.error(request, message, extra_tags=failure_message_tags(error))
        return redirect("assessments:my_assessments")
    return redirect("assessments:take", assessment_id=attempt.assessment_id)


@learner_required
@require_POST
def keep_alive(request: HttpRequest) -> JsonResponse:
    """Keep the learner signed in for another full idle timeout."""
    return JsonResponse({"seconds_left": learner_keep_alive(request)})


@learner_required
def results(request: HttpRequest, assessment_id: int) -> HttpResponse:
    """Show the results, or where the submission stands; POST asks for missing results."""
    if request.method == "POST":
        attempt = attempt_for_learner(request.learner, assessment_id)
        if attempt.is_open:
            return redirect("assessments:take", assessment_id=assessment_id)
        if attempt.state == State.SUBMITTED:
            delivery.attempt_fetch_results(attempt=attempt)
        return redirect("assessments:results", assessment_id=assessment_id)
    # The common case, kept cheap: one query, then the result's section from the cache.
    attempt = results_snapshot(learner=request.learner, assessment_id=assessment_id)
    if attempt is None:
        raise Http404
    if attempt.is_open:
        return redirect("assessments:take", assessment_id=assessment_id)
    page = results_page(learner=request.learner, attempt=attempt)
    return render(request, "assessments/results.html", {"attempt": attempt, "page": page})


@learner_required
@require_GET
@not_activity
def attempt_status(request: HttpRequest, assessment_id: int) -> JsonResponse:
    """Say where the answers stand, from the portal's own records (the waiting page asks)."""
    state = (
        request.learner.attempts.filter(assessment_id=assessment_id)
        .values_list("state", flat=True)
        .first()
    )
    if state is None:
        raise Http404
    return JsonResponse({"state": state, "waiting": state in AssessmentAttempt.WAITING_STATES})


@learner_required
@require_POST
def resend(request: HttpRequest, assessment_id: int) -> HttpResponse:
    """Try again to deliver answers that are waiting to be sent."""
    attempt = attempt_for_learner(request.learner, assessment_id)
    if delivery.attempt_deliver(attempt_id=attempt.pk, force=True) is None:
        if wording_for(request.learner.level) == PRIMARY:
            message = _("We tried a moment ago. Your answers are saved. They will be sent soon.")
        else:
            message = _(
                "Your answers were tried a moment ago. They are safe; please try again in a "
                "minute, or simply come back later: they will be sent automatically."
            )
        messages.info(request, message)
    return redirect("assessments:results", assessment_id=assessment_id)


@learner_required
@require_POST
def refresh(request: HttpRequest, assessment_id: int) -> HttpResponse:
    """Fetch a refused assessment again and ask the learner to confirm their answers."""
    attempt = attempt_for_learner(request.learner, assessment_id)
    try:
        services.attempt_refresh_content(attempt=attempt)
    except services.AttemptClosed:
        return redirect("assessments:results", assessment_id=assessment_id)
    except PartnerApiError as error:
        message = learner_failure_message(error, wording_for(request.learner.level))
        messages.error(request, message, extra_tags=failure_message_tags(error))
        return redirect("assessments:results", assessment_id=assessment_id)
    if wording_for(request.learner.level) == PRIMARY:
        message = _("Your answers are saved. Check them, answer any new questions, then send them.")
    else:
        message = _(
            "We fetched the assessment again and kept every answer that still fits. "
            "Check your answers, answer anything new, then send them."
        )
    messages.info(request, message)
    return redirect("assessments:take", assessment_id=assessment_id)
