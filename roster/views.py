"""The admins' roster pages (built in full by the pages' change; these hold the URL names)."""

from django.http import Http404, HttpRequest, HttpResponse

from accounts.access import admin_required


@admin_required
def roster_index(request: HttpRequest) -> HttpResponse:
    raise Http404


roster_grades = roster_sync = roster_approve = roster_discard = roster_index
roster_result = roster_slips = roster_index
