"""The board: a full-screen page for the classroom projector while pupils sign in."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from accounts.access import staff_required
from lessons.access import lesson_group_or_404
from lessons.qr import address_to_type, card_address
from lessons.selectors import board_counts
from lessons.services import window_current

# How often the board's script asks again while sign-in is open, and while it is closed (a
# board put up before the lesson starts counting once the teacher opens sign-in).
REFRESH_SECONDS = 5
CLOSED_REFRESH_SECONDS = 20


@staff_required
@require_GET
def lesson_board(request: HttpRequest, pk: int) -> HttpResponse:
    """Show where to sign in and how many are in: counts only, never a pupil's name or code."""
    group = lesson_group_or_404(request.user, pk)
    window = window_current(group)
    signed_in, pupils = board_counts(group, window)
    return render(
        request,
        "lessons/board.html",
        {
            "group": group,
            "window": window,
            "signed_in": signed_in,
            "pupils": pupils,
            "card_address": address_to_type(card_address()),
            "refresh_seconds": REFRESH_SECONDS,
            "closed_refresh_seconds": CLOSED_REFRESH_SECONDS,
        },
    )
