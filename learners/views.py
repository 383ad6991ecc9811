"""Staff pages about learners: list, register, detail, its details, attempts, a new password."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables

from accounts.access import (
    is_staff_member,
    one_school,
    sees_results,
    sees_whole_school,
    staff_required,
)
from assessments.models import AssessmentAttempt
from assessments.selectors import latest_result, learner_attempts, score_trend
from classes.access import offered_groups
from classes.services import learner_current_groups
from kit.addresses import client_address
from kit.charts import TrendPoint, line_chart
from learners.access import visible_learner_or_404, visible_learners
from learners.forms import LearnerDetailsForm, LearnerPasswordResetForm, LearnerRegistrationForm
from learners.list_forms import LearnerSearchForm
from learners.models import Learner
from learners.passwords import password_show_once, password_spelled, password_to_show
from learners.selectors import learner_filtered, learner_rows, sign_in_locked_until
from learners.services import (
    LearnerNotEditable,
    RegisteredNotRecorded,
    RegistrationFailed,
    learner_details_change,
    learner_password_reset,
    learner_register,
    learner_results_viewed,
)
from ops.database import database_unavailable_response
from schools.models import PartnerSettings

PAGE_SIZE = 25


@staff_required
def learner_index(request: HttpRequest) -> HttpResponse:
    """List learners with search, filters, a choice of order and pagination."""
    form = LearnerSearchForm(
        request.GET or None, user=request.user, with_results=sees_results(request.user)
    )
    filters = form.filters()
    learners = visible_learners(request.user, learner_filtered(filters))
    if form.group_refused:
        # Never the whole list in place of a class the user may not see: nothing, and why.
        learners = learners.none()
    page = Paginator(learners, PAGE_SIZE).get_page(request.GET.get("page"))
    page.object_list = learner_rows(page.object_list, filters.sort)
    query_without_page = request.GET.copy()
    query_without_page.pop("page", None)
    return render(
        request,
        "learners/list.html",
        {
            "form": form,
            "filtered": filters.narrowed or form.group_refused,
            "page": page,
            "query_string": query_without_page.urlencode(),
        },
    )


@sensitive_post_parameters("password")
@staff_required
@one_school
def learner_new(request: HttpRequest) -> HttpResponse:
    """Register a learner with the upstream."""
    form = LearnerRegistrationForm(
        request.POST if request.method == "POST" else None,
        groups=offered_groups(request.user),
        group_required=not sees_whole_school(request.user),
    )
    if request.method == "POST" and form.is_valid():
        try:
            learner = learner_register(
                registered_by=request.user, address=client_address(request), **form.cleaned_data
            )
        except RegistrationFailed as failure:
            form.add_error(failure.field, failure.message)
        except RegisteredNotRecorded as held:
            return registered_not_recorded(held.username)
        else:
            if form.password_made:
                password_show_once(
                    request.session, learner_id=learner.pk, password=form.cleaned_data["password"]
                )
                registered = _(
                    "%(name)s is registered and can sign in with the username %(username)s "
                    "and the password below."
                )
            else:
                registered = _(
                    "%(name)s is registered and can sign in with the username %(username)s "
                    "and the password you chose."
                )
            names = {"name": learner.display_name, "username": learner.username}
            messages.success(request, registered % names)
            return redirect("learners:detail", pk=learner.pk)
    return render(request, "learners/new.html", {"form": form})


def registered_not_recorded(username: str) -> HttpResponse:
    """Say that the service registered the learner, though the portal could not record it.

    A 503 drawn without the database (which is not answering), so that staff never register
    the learner a second time.
    """
    names = {"username": username}
    return database_unavailable_response(
        heading=_("%(username)s is registered with the assessment service, but not in the portal")
        % names,
        message=_(
            "The portal's database did not answer in time to record this registration. Do not "
            "register %(username)s again: the assessment service already holds that username "
            "and would refuse it. Once the portal answers again, register the learner under "
            "another username, and tell your administrator that the assessment service holds "
            "an unused account named %(username)s."
        )
        % names,
    )


@staff_required
def learner_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Show a learner's record, groups, attempt history and (to whom may see them) results."""
    learner = visible_learner_or_404(request.user, pk, status=Learner.Status.ACTIVE)
    attempts = learner_attempts(learner)
    show_results = sees_results(request.user)
    latest = latest_result(attempts) if show_results else None
    if latest is not None:
        learner_results_viewed(
            learner=learner,
            assessment_id=latest.attempt.assessment_id,
            viewed_by=request.user,
            address=client_address(request),
        )
    return render(
        request,
        "learners/detail.html",
        {
            "learner": learner,
            "attempts": attempts,
            "latest_result": latest,
            "groups": learner_current_groups(learner),
            "sign_in_locked_until": sign_in_locked_until(learner),
            **_leaving(learner),
            **_password_made(request, learner),
            **(_score_trend(learner, attempts) if show_results else {}),
        },
    )


def _leaving(learner: Learner) -> dict:
    """Return what the record says of a leaver: how long the school keeps their records."""
    if learner.left_at is None:
        return {}
    return {"retention_years": PartnerSettings.of(learner.school_id).retention_years}


@sensitive_variables("password")
def _password_made(request: HttpRequest, learner: Learner) -> dict:
    """Return the password the portal just made for the learner, if any: shown this once."""
    password = password_to_show(request.session, learner_id=learner.pk)
    if password is None:
        return {}
    return {"password_made": password, "password_made_spelled": password_spelled(password)}


def _score_trend(learner: Learner, attempts: list[AssessmentAttempt]) -> dict:
    """Return the trend's template context: the selector's figures, drawn as a chart."""
    trend = score_trend(attempts)
    chart = None
    if trend.charted:
        chart = line_chart(
            chart_id="trend-chart",
            title=ngettext(
                "LOA score of %(name)s over the last %(count)s completed assessment",
                "LOA score of %(name)s over the last %(count)s completed assessments",
                len(trend.charted),
            )
            % {"name": learner.display_name, "count": len(trend.charted)},
            points=[
                TrendPoint(
                    on=timezone.localdate(a.completed_at or a.offered_at), score=a.result.loa_score
                )
                for a in trend.charted
            ],
        )
    return {
        "completed_attempts": trend.completed,
        "trend_chart": chart,
        "area_changes": trend.area_changes,
    }


@staff_required
def attempt_results(request: HttpRequest, pk: int, assessment_id: int) -> HttpResponse:
    """Show one attempt of a learner and its stored results."""
    learner = visible_learner_or_404(request.user, pk, status=Learner.Status.ACTIVE)
    attempt = get_object_or_404(
        AssessmentAttempt.objects.select_related("result"),
        learner=learner,
        assessment_id=assessment_id,
    )
    show_results = sees_results(request.user)
    result = getattr(attempt, "result", None) if show_results else None
    if result is not None:
        learner_results_viewed(
            learner=learner,
            assessment_id=attempt.assessment_id,
            viewed_by=request.user,
            address=client_address(request),
        )
    return render(
        request,
        "learners/attempt.html",
        {"learner": learner, "attempt": attempt, "result": result},
    )


@staff_required
def learner_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Correct a learner's names, email, date of birth or level, in the portal only."""
    learner = visible_learner_or_404(request.user, pk, status=Learner.Status.ACTIVE)
    form = LearnerDetailsForm(
        request.POST if request.method == "POST" else None,
        learner=learner,
        may_change_age_and_level=sees_whole_school(request.user),
    )
    if request.method == "POST" and form.is_valid():
        try:
            learner_details_change(
                learner=learner,
                changed_by=request.user,
                address=client_address(request),
                **form.cleaned_data,
            )
        except LearnerNotEditable:
            raise Http404 from None  # erased meanwhile: as if there were no such learner
        messages.success(
            request,
            _(
                "The details of %(name)s are saved in the portal. The assessment service keeps "
                "those given at registration."
            )
            % {"name": learner.display_name},
        )
        return redirect("learners:detail", pk=learner.pk)
    return render(request, "learners/edit.html", {"learner": learner, "form": form})


def _get_learner_for_password_reset(user, pk: int) -> Learner:
    """Return the registered learner the user sees, or 404; never an account that is staff."""
    learner = visible_learner_or_404(user, pk, status=Learner.Status.ACTIVE)
    # A sign-in account linked by hand (in the admin) to a staff or admin user must not let
    # staff take it over by resetting its password.
    if learner.user.is_staff or is_staff_member(learner.user):
        raise Http404
    return learner


@sensitive_post_parameters("new_password1", "new_password2")
@sensitive_variables("password")
@staff_required
def learner_password(request: HttpRequest, pk: int) -> HttpResponse:
    """Set a new password for a learner who forgot theirs."""
    learner = _get_learner_for_password_reset(request.user, pk)
    form = LearnerPasswordResetForm(
        request.POST if request.method == "POST" else None, learner=learner
    )
    if request.method == "POST" and form.is_valid():
        password = form.cleaned_data["new_password1"]
        learner_password_reset(
            learner=learner,
            password=password,
            reset_by=request.user,
            address=client_address(request),
        )
        if form.password_made:
            password_show_once(request.session, learner_id=learner.pk, password=password)
        messages.success(
            request,
            _(
                "The password of %(name)s is reset. Give them the new password: they sign in "
                "with the username %(username)s. Any session they had open is signed out."
            )
            % {"name": learner.display_name, "username": learner.username},
        )
        return redirect("learners:detail", pk=learner.pk)
    return render(request, "learners/password.html", {"learner": learner, "form": form})
