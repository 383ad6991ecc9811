"""The learner's taking flow: where to resume, the question pages, autosave, check and submit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.access import learner_required
from accounts.idle import learner_seconds_left
from assessments import autosave, delivery, page_markup, services
from assessments.forms import QuestionPageForm, field_name
from assessments.models import AssessmentAttempt
from assessments.taking import (
    PageLayout,
    attempt_layout,
    attempt_level,
    attempt_snapshot,
    check_answers_sections,
    first_page_to_resume,
    page_layout,
    question_pages,
    saved_answers,
)

if TYPE_CHECKING:  # annotations only: the learners app sits above this one
    from learners.models import Learner

# A primary pupil's question errors say what is missing, never "Error" (as the check page).
PRIMARY_QUESTION_ERRORS_TEMPLATE = "assessments/includes/question_errors_primary.html"


def attempt_for_learner(learner: Learner, assessment_id: int) -> AssessmentAttempt:
    """Return the learner's own attempt, or 404 (never another learner's)."""
    attempt = get_object_or_404(AssessmentAttempt, learner=learner, assessment_id=assessment_id)
    attempt.learner = learner  # its pages' layout reads the learner's level and school
    return attempt


@learner_required
def take(request: HttpRequest, assessment_id: int) -> HttpResponse:
    """Send the learner to where they left off."""
    attempt = attempt_for_learner(request.learner, assessment_id)
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
        level = attempt_level(snapshot.level, learner.level)
        layout = page_layout(level, learner.school_id, snapshot.one_per_screen)
        pages = page_markup.attempt_pages_markup(snapshot, layout) if snapshot.is_open else ()
        if not pages:
            return redirect("assessments:take", assessment_id=assessment_id)
        if not 1 <= number <= len(pages):
            raise Http404
        return _render_question_page(
            request, assessment_id, layout, pages, number, snapshot.answers
        )

    attempt = attempt_for_learner(request.learner, assessment_id)
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
        # The header's and the page's words follow the attempt's level, as its layout does.
        "learner_wording": layout.wording,
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
    # Without the attempt's content: its state, and the page's choices kept per content.
    learner = request.learner
    snapshot = attempt_snapshot(learner=learner, assessment_id=assessment_id)
    if snapshot is None:
        raise Http404
    if not snapshot.is_open:
        return JsonResponse({"saved": False, "message": _answers_sent()}, status=409)
    level = attempt_level(snapshot.level, learner.level)
    layout = page_layout(level, learner.school_id, snapshot.one_per_screen)
    pages = autosave.attempt_page_choices(snapshot, layout)
    number = request.POST.get("page", "")
    if not number.isdecimal() or not 1 <= int(number) <= len(pages):
        message = _("That page does not exist.")
        return JsonResponse({"saved": False, "message": message}, status=400)
    try:
        choices = autosave.chosen(pages[int(number) - 1], request.POST)
    except autosave.InvalidChoice:
        choices = {}
    if not choices:
        message = _("Choose one of the answers shown.")
        return JsonResponse({"saved": False, "message": message}, status=400)
    try:
        services.attempt_save_answers(attempt=snapshot, choices=choices)
    except services.AttemptClosed:
        return JsonResponse({"saved": False, "message": _answers_sent()}, status=409)
    return JsonResponse({"saved": True, "seconds_left": learner_seconds_left(request)})


@learner_required
def check_answers(request: HttpRequest, assessment_id: int) -> HttpResponse:
    """Show every question with the chosen answer and a link to change it."""
    attempt = attempt_for_learner(request.learner, assessment_id)
    if not attempt.is_open or not attempt.has_content:
        return redirect("assessments:take", assessment_id=assessment_id)
    return _render_check(request, attempt)


def _render_check(request: HttpRequest, attempt: AssessmentAttempt, missing=None, status=200):
    return render(
        request,
        "assessments/check_answers.html",
        {
            "attempt": attempt,
            "pages": check_answers_sections(attempt),
            "missing": missing or [],
            # The header's and the page's words follow the attempt's level, as its layout does.
            "learner_wording": attempt_layout(attempt).wording,
        },
        status=status,
    )


@learner_required
@require_POST
def submit(request: HttpRequest, assessment_id: int) -> HttpResponse:
    """Send the answers, refusing locally while any question is unanswered."""
    attempt = attempt_for_learner(request.learner, assessment_id)
    try:
        attempt = delivery.attempt_submit(attempt=attempt)
    except delivery.IncompleteAnswers as incomplete:
        return _render_check(request, attempt, missing=incomplete.missing, status=400)
    except services.AttemptClosed:
        pass  # already sent, perhaps from another tab: show where it stands
    return redirect("assessments:results", assessment_id=assessment_id)


def _check_answers_url(assessment_id: int, page, position: str | None) -> str:
    """The check page, at the row of the question the learner came to change (if any)."""
    url = reverse("assessments:check", kwargs={"assessment_id": assessment_id})
    entry = next((e for e in page.questions if str(e.position) == position), None)
    return f"{url}#answer-{slugify(entry.question.id)}" if entry else url
