"""Follow-up pages: the queue of learners who need help, and one item."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.text import get_text_list
from django.utils.translation import gettext as _

from accounts.access import results_required, working_school_ids
from followups.forms import FollowUpFilterForm, FollowUpUpdateForm
from followups.selectors import (
    followup_area_names,
    followup_detail,
    followup_queue,
    followup_risk_levels,
    staff_users,
)
from followups.services import followup_due_days, followup_update
from kit.addresses import client_address
from learners.access import group_scope, learner_scope

PAGE_SIZE = 25


@results_required
def followup_index(request: HttpRequest) -> HttpResponse:
    """List follow-up items with filters, a sort and pagination."""
    staff = list(staff_users())
    form = FollowUpFilterForm(
        request.GET,
        user=request.user,
        staff=staff,
        area_names=followup_area_names(),
        risk_levels=followup_risk_levels(),
    )
    filters = form.filters()
    items = followup_queue(
        viewer=request.user,
        scope=group_scope(request.user),
        school_ids=working_school_ids(request.user),
        **filters,
    )
    if form.group_refused:
        # Never the whole queue in place of a class the user may not see: nothing, and why.
        items = items.none()
    page = Paginator(items, PAGE_SIZE).get_page(request.GET.get("page"))
    query_without_page = request.GET.copy()
    query_without_page.pop("page", None)
    return render(
        request,
        "followups/queue.html",
        {
            "form": form,
            "filters": filters,
            "page": page,
            "query_string": query_without_page.urlencode(),
            "filtered": bool(query_without_page),
            "due_days": followup_due_days(),
        },
    )


@results_required
def followup_item(request: HttpRequest, pk: int) -> HttpResponse:
    """Show one item; change its status, assignee or due date, or add a note."""
    follow_up = followup_detail(pk, scope=learner_scope(request.user))
    if follow_up is None:
        raise Http404
    form = FollowUpUpdateForm(
        request.POST if request.method == "POST" else None,
        follow_up=follow_up,
        staff=staff_users(follow_up.school_id),
    )
    if request.method == "POST" and form.is_valid():
        change = followup_update(
            follow_up=follow_up,
            changed_by=request.user,
            address=client_address(request),
            **form.cleaned_data,
        )
        messages.success(request, _change_message(change.fields, change.note_added))
        return redirect("followups:detail", pk=follow_up.pk)
    return render(request, "followups/detail.html", {"follow_up": follow_up, "form": form})


def _change_message(fields: list[str], note_added: bool) -> str:
    # Translators: what a staff member's save changed, listed in "Saved: ..." below.
    labels = {"status": _("status"), "assignee": _("assignee"), "due_date": _("due date")}
    parts = [labels[name] for name in fields] + ([_("a note")] if note_added else [])
    if not parts:
        return _("Nothing needed changing: someone else had already made the same change.")
    # Translators: %(changes)s lists what was saved, e.g. "status, due date and a note".
    return _("Saved: %(changes)s.") % {"changes": get_text_list(parts, _("and"))}
