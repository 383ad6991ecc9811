"""The cohort dashboard (the staff home page), its results download, and the trust's figures."""

from dataclasses import replace

from django.contrib import messages
from django.contrib.auth.base_user import AbstractBaseUser
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from accounts.access import (
    results_required,
    sees_results,
    sees_whole_school,
    staff_required,
    trust_required,
    working_school_ids,
)
from classes.filters import group_learner_ids, offered_by
from dashboard.by_class import class_figures
from dashboard.exports import RESULT_HEADER, results_export
from dashboard.forms import CohortFilterForm
from dashboard.selectors import CohortFilters
from dashboard.summary import cohort_summary
from dashboard.trust import trust_figures
from kit.addresses import client_address
from kit.csv_export import csv_download
from learners.access import group_scope
from signin.second_factor import step_up_required


@staff_required
def dashboard(request: HttpRequest) -> HttpResponse:
    """Show the cohort at a glance and by class, filtered by level, class and date range."""
    form = CohortFilterForm(request.GET or None, user=request.user)
    filters = _seen_by(form.cohort_filters(), request.user)
    filter_detail = form.filter_detail()
    filter_query = urlencode(filter_detail)
    with_results = sees_results(request.user)
    groups = [filters.group] if filters.group else offered_by(form)
    summary = cohort_summary(
        filters, with_results=with_results, with_operations=sees_whole_school(request.user)
    )
    return render(
        request,
        "dashboard/home.html",
        {
            "form": form,
            "filtered": bool(filter_query),
            "summary": summary,
            "by_class": class_figures(
                filters,
                groups,
                with_results=with_results,
                filter_detail=filter_detail,
                results_withheld=summary.other_levels_withheld,
            ),
            "filter_query": filter_query,
            # The period chosen, for figures other apps add (time to acknowledge alerts).
            "window": filters,
        },
    )


@results_required
@require_GET
@step_up_required
def results_csv(request: HttpRequest) -> HttpResponse:
    """Download the results of completed assessments for the dashboard's filters, as CSV."""
    form = CohortFilterForm(request.GET, user=request.user)
    if not form.is_valid():
        # The dashboard shows the same form with its error summary.
        messages.error(request, _("Nothing was exported: correct the filters first."))
        return redirect(f"{reverse('dashboard:home')}?{request.GET.urlencode()}")
    rows = results_export(
        filters=_seen_by(form.cohort_filters(), request.user),
        filter_detail=form.filter_detail(),
        exported_by=request.user,
        address=client_address(request),
    )
    return csv_download(f"results-{timezone.localdate().isoformat()}.csv", RESULT_HEADER, rows)


@trust_required
def trust(request: HttpRequest) -> HttpResponse:
    """Show every school's figures side by side, and the trust's totals (never a learner)."""
    return render(request, "dashboard/trust.html", {"trust": trust_figures()})


def _seen_by(filters: CohortFilters, user: AbstractBaseUser) -> CohortFilters:
    """Return the filters limited to the learners the user sees (learners.access), and a class's."""
    scope = group_scope(user)
    if filters.group is not None:
        members = group_learner_ids(filters.group)
        scope = members if scope is None else members.filter(learner_id__in=scope)
    return replace(filters, learners_in=scope, school_ids=working_school_ids(user))
