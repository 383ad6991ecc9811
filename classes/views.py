"""Group pages: the groups a member of staff sees, one group's learners, and (admins) changes."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from accounts.access import (
    admin_required,
    is_partner_admin,
    one_school,
    staff_required,
    working_school,
)
from accounts.selectors import staff_accounts
from classes.access import visible_group_or_404
from classes.archived import archived_refused, group_check_open
from classes.forms import GroupForm, LearnerPickForm
from classes.models import learner_model
from classes.selectors import group_candidates, group_index, group_members, has_archived_groups
from classes.services import (
    LearnersLeft,
    group_create,
    group_learner_remove,
    group_learners_add_chosen,
    group_update,
)
from kit.addresses import client_address
from schools.models import several_schools


@staff_required
def group_list(request: HttpRequest) -> HttpResponse:
    """List the current groups the member of staff sees (or, asked, the archived ones)."""
    archived = request.GET.get("archived") == "1"
    return render(
        request,
        "learners/groups/list.html",
        {
            "groups": group_index(request.user, archived=archived),
            "archived": archived,
            "has_archived": archived or has_archived_groups(request.user),
        },
    )


@admin_required
@one_school
def group_new(request: HttpRequest) -> HttpResponse:
    """Create a group (a teaching class unless another kind is chosen)."""
    form = GroupForm(
        request.POST if request.method == "POST" else None,
        staff_accounts=_school_staff(working_school(request.user)),
    )
    if request.method == "POST" and form.is_valid():
        group = group_create(
            **{field: form.cleaned_data[field] for field in GroupForm.Meta.fields},
            staff=form.cleaned_data["staff"],
            created_by=request.user,
            address=client_address(request),
        )
        messages.success(request, _("The group %(name)s is made.") % {"name": group.name})
        return redirect("classes:detail", pk=group.pk)
    return render(request, "learners/groups/form.html", {"form": form, "group": None})


@admin_required
@archived_refused
def group_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Change a group's details and who works with it (never last year's, archived)."""
    group = visible_group_or_404(request.user, pk)
    group_check_open(group)
    form = GroupForm(
        request.POST if request.method == "POST" else None,
        instance=group,
        staff_accounts=_school_staff(group.school_id),
    )
    if request.method == "POST" and form.is_valid():
        changed = group_update(
            group=group,
            **{field: form.cleaned_data[field] for field in GroupForm.Meta.fields},
            staff=form.cleaned_data["staff"],
            changed_by=request.user,
            address=client_address(request),
        )
        messages.success(request, _("Saved.") if changed else _("Nothing needed changing."))
        return redirect("classes:detail", pk=pk)
    return render(request, "learners/groups/form.html", {"form": form, "group": group})


def _school_staff(school_id: int | None):
    """Return who may work with a school's group: its staff, and the trust's."""
    return staff_accounts(school_ids=[school_id] if several_schools() else None)


@staff_required
def group_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Show a group: its staff, its learners' progress, past members; admins add and remove."""
    group = visible_group_or_404(request.user, pk)
    query = request.GET.get("q", "").strip()[:100]
    pick_form = None
    if is_partner_admin(request.user) and query and not group.is_archived:
        # Back from the question about levels: the same learners ticked again.
        chosen = [pk for pk in request.GET.getlist("learners") if pk.isdigit()]
        pick_form = LearnerPickForm(
            candidates=group_candidates(group, query), group=group, initial={"learners": chosen}
        )
    return render(
        request,
        "learners/groups/detail.html",
        {"group": group, "query": query, "pick_form": pick_form, **group_members(group)},
    )


@admin_required
@require_POST
@archived_refused
def group_add_learners(request: HttpRequest, pk: int) -> HttpResponse:
    """Put the chosen learners in the group; add nobody till staff confirm another level."""
    group = visible_group_or_404(request.user, pk)
    group_check_open(group)
    query = request.POST.get("q", "").strip()[:100]
    search = _search_url(group, query)
    # Only the group's school's learners: another school's id is not a choice, asked or not.
    candidates = learner_model().objects.registered().filter(school_id=group.school_id)
    form = LearnerPickForm(request.POST, candidates=candidates, group=group)
    if not form.is_valid():
        messages.error(request, " ".join(form.errors.get("learners", [])))
        return redirect(search)
    chosen = list(form.cleaned_data["learners"])
    try:
        joined, held = group_learners_add_chosen(
            group=group,
            learners=chosen,
            other_levels_confirmed=form.cleaned_data["confirm"],
            added_by=request.user,
            address=client_address(request),
        )
    except LearnersLeft as left:
        messages.error(request, _left_message(left))
        return redirect(search)
    if held:
        # Nobody added yet: "Go back" returns to the same search with every choice still ticked.
        back = _search_url(group, query, chosen=sorted(learner.pk for learner in chosen))
        return render(
            request,
            "learners/groups/add_confirm.html",
            {
                "group": group,
                "held": held,
                "joining": [learner for learner in chosen if learner not in held],
                "query": query,
                "back": back,
            },
        )
    messages.success(
        request,
        ngettext(
            "%(count)d learner added to %(name)s.",
            "%(count)d learners added to %(name)s.",
            joined,
        )
        % {"count": joined, "name": group.name},
    )
    return redirect(search)


def _search_url(group, query: str, chosen: list[int] | None = None) -> str:
    """Return the class page, at its search for `query` (with `chosen` ticked) if there was one."""
    url = reverse("classes:detail", args=[group.pk])
    params = [("q", query)] if query else []
    params += [("learners", pk) for pk in chosen or []]
    return f"{url}?{urlencode(params)}#add-learners" if params else url


def _left_message(left: LearnersLeft) -> str:
    """Say who left the school and so joined no class."""
    names = ", ".join(learner.display_name for learner in left.learners)
    return ngettext(
        "Nobody was added: %(names)s has left the school, and a learner who left joins no class.",
        "Nobody was added: %(names)s have left the school, and a learner who left joins no class.",
        len(left.learners),
    ) % {"names": names}


@admin_required
@require_POST
@archived_refused
def group_remove_learner(request: HttpRequest, pk: int, learner_pk: int) -> HttpResponse:
    """Take one learner out of the group (their time in it stays in its history)."""
    group = visible_group_or_404(request.user, pk)
    group_check_open(group)
    learner = get_object_or_404(learner_model(), pk=learner_pk, school_id=group.school_id)
    if group_learner_remove(
        group=group, learner=learner, removed_by=request.user, address=client_address(request)
    ):
        messages.success(
            request,
            _("%(learner)s is no longer in %(name)s.")
            % {"learner": learner.display_name, "name": group.name},
        )
    return redirect("classes:detail", pk=pk)
