"""End a card's session when its window closes, staff end it, or the card is voided."""

from django.contrib.auth import logout
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse

from lessons.card_sign_in import CARD_SESSION, card_session_live


class CardSessionMiddleware:
    """Sign out a card's pupil as soon as their session may not go on (one query a request)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        session_id = request.session.get(CARD_SESSION) if hasattr(request, "session") else None
        if session_id is not None and not card_session_live(session_id):
            logout(request)
            return redirect(reverse("lessons:card") + "?ended=1")
        return self.get_response(request)
