"""A pupil who signs out ends their card's session: the card is free for another device."""

from lessons.card_sign_in import CARD_SESSION, card_session_finish
from lessons.models import CardSession


def card_session_signed_out(sender, request, user, **kwargs) -> None:
    """End the card session the request's session holds, if any."""
    session_id = request.session.get(CARD_SESSION) if request is not None else None
    if session_id is not None:
        card_session_finish(session_id, CardSession.EndReason.SIGNED_OUT)
