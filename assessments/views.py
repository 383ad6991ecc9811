"""The learner's pages: my assessments, the taking flow, submission and results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.access import learner_required, safeguarding_ready
from accounts.idle import learner_keep_alive, learner_seconds_left, not_activity
from assessments import delivery, page_markup, services
from assessments.child_words import PRIMARY, learner_failure_message, wording_for
from assessments.forms import QuestionPageForm, field_name
from assessments.learner_results import results_page
from assessments.models import AssessmentAttempt
from assessments.taking import (
    PageLayout,
    attempt_layout,
    attempt_snapshot,
    check_answers_sections,
    current_attempt,
    first_page_to_resume,
    page_layout,
    question_pages,
    results_snapshot,
    saved_answers,
)
from partner_api import PartnerApiError
from partner_api.upstream import failure_message_tags
from schools.models import PartnerSettings

if TYPE_CHECKING:  # annotations only: the learners app sits above this one
    from learners.models import Learner

State = AssessmentAttempt.State
# A primary pupil's question errors say what is missing, never "Error" (as the check page).
PRIMARY_QUESTION_ERRORS_TEMPLATE = "assessments/includes/question_errors_primary.html"


def _get_attempt_for_learner(learner: Learner, assessment_id: int) -> AssessmentAttempt:
    """Return the learner's own attempt, or 404 (never another learner's)."""
    attempt = get_object_or_404(AssessmentAttempt, learner=learner, assessment_id=assessment_id)
    attempt.learner = learner  # its pages' layout reads the learner's level and school
    return attempt


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
def take(request: HttpRequest, assessment_id: int) -> HttpResponse:
    """Send the learner to where they left off."""
    attempt = _get_attempt_for_learner(request.learner, assessment_id)
    if not attempt.is_open or not attempt.has_content:
        if attempt.is_open:
            return redirect("assessments:my_assessments")
        return redirect("assessments:results", assessment_id=assessment_id)
    number = first_page_to_resume(attempt, saved_answers(attempt))
    if number is None:
        return redirect("assessments:check", assessment_id=assessment_id)
    return redirect("assessments:page", assessment_id=assessment_id, number=number)


@learner_required
def question_page(request: HttpRequest, assessment_id: int, number: int) -> HttpResponse:
    """Show one page of questions; save the answers chosen on it."""
    if request.method != "POST":
        # The common case, kept cheap: one query, then cached fieldsets with answers checked.
        snapshot = attempt_snapshot(learner=request.learner, assessment_id=assessment_id)
        if snapshot is None:
            raise Http404
        learner = request.learner
        layout = page_layout(snapshot.level or learner.level, learner.school_id)
        pages = page_markup.attempt_pages_markup(snapshot, layout) if snapshot.is_open else ()
        if not pages:
            return redirect("assessments:take", assessment_id=assessment_id)
        if not 1 <= number <= len(pages):
            raise Http404
        return _render_question_page(
            request, assessment_id, layout, pages, number, snapshot.answers
        )

    attempt = _get_attempt_for_learner(request.learner, assessment_id)
    if not attempt.is_open or not attempt.has_content:
        return redirect("assessments:take", assessment_id=assessment_id)
    layout = attempt_layout(attempt)
    pages = question_pages(attempt, layout)
    if not 1 <= number <= len(pages):
        raise Http404
    page = pages[number - 1]
    # An empty POST is still a POST (an autosave with nothing chosen yet): bind it.
    form = QuestionPageForm(request.POST, page=page)
    form.is_valid()  # unanswered questions are allowed here; bad choices are errors
    try:
        services.attempt_save_answers(attempt=attempt, choices=form.choices())
    except services.AttemptClosed:
        messages.info(request, _("These answers have already been sent."))
        return redirect("assessments:results", assessment_id=assessment_id)
    if "save_and_exit" in request.POST:
        messages.success(request, _("Your answers are saved. You can come back at any time."))
        return redirect("assessments:my_assessments")
    if "previous" in request.POST and number > 1:
        return redirect("assessments:page", assessment_id=assessment_id, number=number - 1)
    if form.require_every_answer():
        if number < len(pages) and not _returning_to_check(request):
            return redirect("assessments:page", assessment_id=assessment_id, number=number + 1)
        return redirect(_check_answers_url(assessment_id, page, request.GET.get("q")))

    # The same cached fieldsets as a page view, filled with what was sent and its errors.
    posted = {entry.question.id: request.POST.get(field_name(entry)) for entry in page.questions}
    if layout.one_per_screen:  # the progress dots show the other pages' saved answers
        posted = {**saved_answers(attempt), **posted}
    markup = page_markup.attempt_pages_markup(attempt, layout)
    return _render_question_page(
        request, assessment_id, layout, markup, number, posted, form.errors, bool(form.choices())
    )


def _returning_to_check(request: HttpRequest) -> bool:
    """Return whether a "Change" link of the check page led here (saving goes back there)."""
    return request.GET.get("from") == "check"


def _render_question_page(
    request: HttpRequest,
    assessment_id: int,
    layout: PageLayout,
    pages: tuple[page_markup.PageMarkup, ...],
    number: int,
    chosen: dict[str, str | None],
    errors: dict[str, list[str]] | None = None,
    chosen_on_page: bool = False,
) -> HttpResponse:
    """Render a page of questions from its markup, filled with the choices and any errors."""
    page = pages[number - 1]
    context = {
        "assessment_id": assessment_id,
        "layout": layout,
        # One dot per question, for the youngest who see one question at a time.
        "dots": page_markup.progress_dots(pages, number, chosen) if layout.one_per_screen else (),
        "page": page,
        "page_count": len(pages),
        "returning_to_check": _returning_to_check(request),
        "questions_html": page.questions.render(
            chosen,
            errors,
            PRIMARY_QUESTION_ERRORS_TEMPLATE
            if layout.primary
            else page_markup.QUESTION_ERRORS_TEMPLATE,
        ),
        "error_summary": page.questions.error_summary(errors) if errors else [],
        "chosen_on_page": chosen_on_page,
    }
    return render(request, "assessments/question_page.html", context)


def _answers_sent() -> str:
    return _("These answers have already been sent, so they can no longer be changed.")


@learner_required
@require_POST
def save_answer(request: HttpRequest, assessment_id: int) -> JsonResponse:
    """Save one answer as it is chosen (the question page's autosave script)."""
    attempt = _get_attempt_for_learner(request.learner, assessment_id)
    if not attempt.is_open:
        return JsonResponse({"saved": False, "message": _answers_sent()}, status=409)
    pages = question_pages(attempt) if attempt.has_content else []
    number = request.POST.get("page", "")
    if not number.isdecimal() or not 1 <= int(number) <= len(pages):
        message = _("That page does not exist.")
        return JsonResponse({"saved": False, "message": message}, status=400)
    form = QuestionPageForm(request.POST, page=pages[int(number) - 1])
    if not form.is_valid() or not form.choices():
        message = _("Choose one of the answers shown.")
        return JsonResponse({"saved": False, "message": message}, status=400)
    try:
        services.attempt_save_answers(attempt=attempt, choices=form.choices())
    except services.AttemptClosed:
        return JsonResponse({"saved": False, "message": _answers_sent()}, status=409)
    return JsonResponse({"saved": True, "seconds_left": learner_seconds_left(request)})


@learner_required
@require_POST
def keep_alive(request: HttpRequest) -> JsonResponse:
    """Keep the learner signed in for another full idle timeout."""
    return JsonResponse({"seconds_left": learner_keep_alive(request)})


@learner_required
def check_answers(request: HttpRequest, assessment_id: int) -> HttpResponse:
    """Show every question with the chosen answer and a link to change it."""
    attempt = _get_attempt_for_learner(request.learner, assessment_id)
    if not attempt.is_open or not attempt.has_content:
        return redirect("assessments:take", assessment_id=assessment_id)
    return _render_check(request, attempt)


def _render_check(request: HttpRequest, attempt: AssessmentAttempt, missing=None, status=200):
    return render(
        request,
        "assessments/check_answers.html",
        {"attempt": attempt, "pages": check_answers_sections(attempt), "missing": missing or []},
        status=status,
    )


@learner_required
@require_POST
def submit(request: HttpRequest, assessment_id: int) -> HttpResponse:
    """Send the answers, refusing locally while any question is unanswered."""
    attempt = _get_attempt_for_learner(request.learner, assessment_id)
    try:
        attempt = delivery.attempt_submit(attempt=attempt)
    except delivery.IncompleteAnswers as incomplete:
        return _render_check(request, attempt, missing=incomplete.missing, status=400)
    except services.AttemptClosed:
        pass  # already sent, perhaps from another tab: show where it stands
    return redirect("assessments:results", assessment_id=assessment_id)


@learner_required
def results(request: HttpRequest, assessment_id: int) -> HttpResponse:
    """Show the results, or where the submission stands; POST asks for missing results."""
    if request.method == "POST":
        attempt = _get_attempt_for_learner(request.learner, assessment_id)
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


def _check_answers_url(assessment_id: int, page, position: str | None) -> str:
    """The check page, at the row of the question the learner came to change (if any)."""
    url = reverse("assessments:check", kwargs={"assessment_id": assessment_id})
    entry = next((e for e in page.questions if str(e.position) == position), None)
    return f"{url}#answer-{slugify(entry.question.id)}" if entry else url


@learner_required
@require_POST
def resend(request: HttpRequest, assessment_id: int) -> HttpResponse:
    """Try again to deliver answers that are waiting to be sent."""
    attempt = _get_attempt_for_learner(request.learner, assessment_id)
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
    attempt = _get_attempt_for_learner(request.learner, assessment_id)
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
