"""Follow-up pages: the queue of learners who need help, and one item."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from portal.access import staff_required


@staff_required
def followup_queue(request: HttpRequest) -> HttpResponse:
    """List follow-up items (placeholder until the queue lands)."""
    return render(request, "followups/queue.html", {})
