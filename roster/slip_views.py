"""The password slips of a roster sync's new pupils: a class's slips printed once each."""

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _

from accounts.access import admin_required
from kit.addresses import client_address
from roster.selectors import roster_syncs_visible, sync_part_school
from roster.slips import roster_slip_groups, roster_slips_take


@admin_required
def roster_slips(request: HttpRequest, pk: int) -> HttpResponse:
    """List the classes with slips to print; a POST naming one prints its slips, once."""
    sync = get_object_or_404(roster_syncs_visible(request.user), pk=pk)
    part_of = sync_part_school(sync, request.user)  # a school admin: their school's slips
    groups = roster_slip_groups(sync, part_of)
    if request.method == "POST":
        chosen = next((g for g, _count in groups if str(g.pk) == request.POST.get("group")), None)
        if chosen is None:
            messages.error(
                request, _("Choose a class from the list: its slips may have been printed.")
            )
            return redirect("roster:slips", pk=pk)
        slips = roster_slips_take(
            sync=sync,
            group=chosen,
            taken_by=request.user,
            address=client_address(request),
            school_id=part_of,
        )
        if not slips:
            messages.error(
                request, _("The slips of %(name)s were printed already.") % {"name": chosen.name}
            )
            return redirect("roster:slips", pk=pk)
        context = {
            "sync": sync,
            "group": chosen,
            "slips": slips,
            "sign_in_url": request.build_absolute_uri(reverse("login")),
        }
        return render(request, "roster/slips_print.html", context)
    context = {
        "sync": sync,
        "groups": groups,
        "ttl_minutes": settings.IMPORT_CREDENTIALS_TTL // 60,
    }
    return render(request, "roster/slips.html", context)
