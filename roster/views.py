"""The admins' roster pages: upload, the list of syncs, a sync's preview and outcome, its file.

The grades table and the password slips have modules of their own (grade_views, slip_views).
"""

import logging
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from accounts.access import admin_required, is_trust_admin, working_school
from imports.selectors import import_progress
from kit.addresses import client_address
from kit.csv_export import csv_download
from roster.background import roster_upload_queue
from roster.forms import RosterUploadForm
from roster.grade_views import roster_grades
from roster.models import RosterSync
from roster.plan import SyncPlan
from roster.selectors import (
    PROBLEMS_SHOWN,
    plan_part,
    roster_syncs_visible,
    school_lists,
    sync_decidable,
    sync_figures,
    sync_hold_reasons,
    sync_import_jobs,
    sync_list_figures,
    sync_part_school,
    sync_result_rows,
)
from roster.services import (
    RosterSyncClosed,
    roster_sync_approve,
    roster_sync_discard,
)
from roster.slip_views import roster_slips
from schools.models import School, several_schools

__all__ = [
    "roster_approve",
    "roster_discard",
    "roster_grades",
    "roster_index",
    "roster_result",
    "roster_slips",
    "roster_sync",
]

logger = logging.getLogger(__name__)

SYNCS_PER_PAGE = 25
# A sync being read or applied: its page looks again this often (roster_wait.js, or a
# <noscript> meta refresh).
REFRESH_SECONDS = 3

# Translators: The database failed while an admin approved or discarded a roster sync.
DATABASE_FAILED = gettext_lazy(
    "The portal could not reach its database just now: nothing was changed. Try again in a minute."
)


def _upload_school(request: HttpRequest) -> School | None:
    """Return the school an upload is limited to: the one worked in; None for every school."""
    if not several_schools():
        return None
    school_id = working_school(request.user)
    return None if school_id is None else School.objects.get(pk=school_id)


@admin_required
def roster_index(request: HttpRequest) -> HttpResponse:
    """Upload the school's records; list the syncs, newest first."""
    posted = request.method == "POST"
    form = RosterUploadForm(request.POST if posted else None, request.FILES if posted else None)
    if posted and form.is_valid():
        upload = form.cleaned_data["file"]
        sync = roster_upload_queue(
            upload=upload,
            filename=Path(upload.name).name,
            school=_upload_school(request),
            started_by=request.user,
            address=client_address(request),
        )
        return redirect("roster:sync", pk=sync.pk)
    # A trust's plan runs to megabytes: the list reads each part's counts kept beside it.
    syncs = roster_syncs_visible(request.user).defer("plan").prefetch_related("schools")
    page = Paginator(syncs, SYNCS_PER_PAGE).get_page(request.GET.get("page"))
    for sync in page.object_list:
        sync.part_of = sync_part_school(sync, request.user)
        sync.figures = sync_list_figures(sync, sync.part_of)
    context = {
        "form": form,
        "page": page,
        "syncs": page.object_list,
        "upload_school": _upload_school(request),
        "several": several_schools(),
        "drop_dir": settings.ROSTER_DROP_DIR,
    }
    return render(request, "roster/index.html", context)


@admin_required
@require_GET
def roster_sync(request: HttpRequest, pk: int) -> HttpResponse:
    """Show a sync: why it is held, its effect per school, the names, problems, progress."""
    sync = get_object_or_404(roster_syncs_visible(request.user), pk=pk)
    part_of = sync_part_school(sync, request.user)
    whole = SyncPlan.from_json(sync.plan or {})
    plan = plan_part(sync, whole, part_of)
    several = several_schools()
    jobs = sync_import_jobs(sync)
    if part_of is not None:
        jobs = jobs.filter(school_id=part_of)
    context = {
        "sync": sync,
        "figures": sync_figures(sync, part_of),
        "part_of": part_of,
        "hold_reasons": sync_hold_reasons(sync, whole) if part_of is None else _part_reasons(plan),
        "schools": [(school, school_lists(school)) for school in plan.schools],
        "show_school_names": several or len(plan.schools) > 1,
        "problems": plan.problems[:PROBLEMS_SHOWN],
        "problems_more": max(0, len(plan.problems) - PROBLEMS_SHOWN),
        "problems_total": len(plan.problems),
        "held": sync.state == RosterSync.State.HELD,
        "working": sync.state in (RosterSync.State.READING, RosterSync.State.APPLYING),
        "refresh_seconds": REFRESH_SECONDS,
        "decidable": sync_decidable(sync, request.user),
        "registrations": [(job, import_progress(job)) for job in jobs],
        "trust_wide": several and sync.school_id is None,
        "trust_admin": is_trust_admin(request.user),
    }
    return render(request, "roster/sync.html", context)


def _part_reasons(plan: SyncPlan) -> list[str]:
    """Return why a school's part is held: the whole sync's reasons and the school's own."""
    reasons = list(plan.hold_reasons)
    for school in plan.schools:
        reasons += school.hold_reasons
    return list(dict.fromkeys(reasons))


def _undecidable(request: HttpRequest, sync: RosterSync) -> HttpResponse | None:
    """Refuse a school admin's decision on a sync of several schools, saying who decides."""
    if sync_decidable(sync, request.user):
        return None
    messages.error(
        request,
        _("This sync changes several schools: only a trust admin can approve or discard it."),
    )
    return redirect("roster:sync", pk=sync.pk)


@admin_required
@require_POST
def roster_approve(request: HttpRequest, pk: int) -> HttpResponse:
    """Apply a held sync exactly as previewed."""
    sync = get_object_or_404(roster_syncs_visible(request.user), pk=pk)
    if refused := _undecidable(request, sync):
        return refused
    try:
        # Applied by a worker: a trust's plan may take longer than a request may.
        roster_sync_approve(
            sync=sync, approved_by=request.user, address=client_address(request), at_once=False
        )
    except RosterSyncClosed as closed:
        messages.error(request, str(closed))
    except DatabaseError:
        # Rolled back: the sync is as it was. Logged, for the portal's administrators.
        logger.exception("Roster sync %s could not be decided: database error", sync.pk)
        messages.error(request, str(DATABASE_FAILED))
    else:
        messages.success(
            request,
            _("Approved: the school's records are being applied. This page shows when it is done."),
        )
    return redirect("roster:sync", pk=pk)


@admin_required
@require_POST
def roster_discard(request: HttpRequest, pk: int) -> HttpResponse:
    """Drop a held sync: nothing of it is applied."""
    sync = get_object_or_404(roster_syncs_visible(request.user), pk=pk)
    if refused := _undecidable(request, sync):
        return refused
    try:
        roster_sync_discard(sync=sync, discarded_by=request.user, address=client_address(request))
    except RosterSyncClosed as closed:
        messages.error(request, str(closed))
    except DatabaseError:
        # Rolled back: the sync is as it was. Logged, for the portal's administrators.
        logger.exception("Roster sync %s could not be decided: database error", sync.pk)
        messages.error(request, str(DATABASE_FAILED))
    else:
        messages.success(request, _("Discarded: nothing in these files was applied."))
    return redirect("roster:sync", pk=pk)


@admin_required
@require_GET
def roster_result(request: HttpRequest, pk: int) -> HttpResponse:
    """Download every entry of the sync's plan and every problem (CSV)."""
    sync = get_object_or_404(roster_syncs_visible(request.user), pk=pk)
    whole = SyncPlan.from_json(sync.plan or {})
    plan = plan_part(sync, whole, sync_part_school(sync, request.user))
    return csv_download(
        f"roster-sync-{sync.pk}.csv",
        ["school", "what", "name", "sourcedId", "detail", "file", "line", "reason"],
        sync_result_rows(plan),
    )
