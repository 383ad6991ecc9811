"""The pupil's side: `/card/`, signing in with a card's QR code or its typed code.

A GET never signs anyone in: the page's script reads the secret from the address's fragment
(which no server, proxy or log ever sees) and POSTs it. A recognised card then asks "That's
me: <first name>"; the second POST signs in. The card page gives each browser a device cookie,
by which refused cards are counted (lessons.card_throttle).
"""

import time

from django.conf import settings
from django.contrib.auth import login, logout
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods

from assessments.child_words import school_name
from kit.addresses import client_address
from lessons.card_sign_in import (
    CARD_SESSION,
    CardCheck,
    Outcome,
    card_check,
    card_check_again,
    card_in_use_elsewhere,
    card_session_attach,
    card_session_begin,
    card_session_finish,
)
from lessons.card_throttle import (
    DEVICE_COOKIE,
    DEVICE_COOKIE_MAX_AGE,
    DEVICE_COOKIE_SALT,
    CardAttempt,
    device_cookie_may_be_given,
    device_id_new,
)
from lessons.devices import device_description
from lessons.forms import CardCodeForm
from lessons.models import CardSession

# The card recognised by the first POST, waiting for the pupil's "That's me".
PENDING = "card_pending"
PENDING_SECONDS = 120
_BACKEND = "accounts.auth.CaseInsensitiveModelBackend"


@never_cache
@sensitive_post_parameters("secret", "code")
@require_http_methods(["GET", "POST"])
def card_sign_in(request: HttpRequest) -> HttpResponse:
    """Show the card page; recognise a card; sign its pupil in after "That's me"."""
    if request.method == "GET":
        return _card_page(request, CardCodeForm(), ended="ended" in request.GET)
    if "confirm" in request.POST:
        return _confirm(request)
    secret = request.POST.get("secret", "")[:200]
    form = CardCodeForm(request.POST if not secret else None)
    if not secret and not form.is_valid():
        return _card_page(request, form)
    code = form.cleaned_data["code"] if not secret else ""
    check = card_check(secret=secret, code=code, attempt=_attempt(request))
    if check.outcome is not Outcome.ACCEPTED:
        return _refused(request, check.outcome)
    if card_in_use_elsewhere(
        check=check, session_key=_own_session_key(request, check), attempt=_attempt(request)
    ):
        return _refused(request, Outcome.IN_USE)
    request.session[PENDING] = {"card": check.card.pk, "at": time.time()}
    learner = check.card.learner
    # The pupil is known now: the page is headed by their school, as their own pages are.
    context = {
        "name": learner.first_name or learner.display_name,
        "learner_school_name": school_name(learner.school_id),
    }
    return render(request, "lessons/card_confirm.html", context)


def _confirm(request: HttpRequest) -> HttpResponse:
    pending = request.session.pop(PENDING, None)
    if not pending or time.time() - pending.get("at", 0) > PENDING_SECONDS:
        return _card_page(request, CardCodeForm(), expired=True)
    check = card_check_again(card_id=pending["card"], attempt=_attempt(request))
    if check.outcome is Outcome.TOO_MANY:
        return _refused(request, check.outcome)
    if check.outcome is not Outcome.ACCEPTED or not check.card.learner.user.is_active:
        return _refused(request, Outcome.REFUSED)
    return _sign_in(request, check)


def _own_session_key(request: HttpRequest, check: CardCheck) -> str | None:
    """Return this browser's session key if the card's own pupil is signed in here."""
    same_pupil = request.user.is_authenticated and request.user.pk == check.card.learner.user_id
    return request.session.session_key if same_pupil else None


def _attempt(request: HttpRequest) -> CardAttempt:
    """Return where the card is tried: the address, and the device by its cookie, if any."""
    return CardAttempt(
        address=client_address(request),
        device_id=_device_id(request),
        device=device_description(request.META.get("HTTP_USER_AGENT", "")),
    )


def _device_id(request: HttpRequest) -> str | None:
    """Return the id in the browser's device cookie; None if it has none the portal signed."""
    return request.get_signed_cookie(DEVICE_COOKIE, default=None, salt=DEVICE_COOKIE_SALT)


def _sign_in(request: HttpRequest, check: CardCheck) -> HttpResponse:
    user = check.card.learner.user
    own_key = _own_session_key(request, check)
    session = card_session_begin(check=check, session_key=own_key, attempt=_attempt(request))
    if session is None:
        return _refused(request, Outcome.IN_USE)
    if own_key and request.session.get(CARD_SESSION) == session.pk:
        return redirect("assessments:my_assessments")
    # A shared device: whoever was signed in here is signed out first, their session ended.
    previous = request.session.get(CARD_SESSION)
    if previous is not None:
        card_session_finish(previous, CardSession.EndReason.REPLACED)
    if request.user.is_authenticated:
        logout(request)
    login(request, user, backend=_BACKEND)
    request.session[CARD_SESSION] = session.pk
    card_session_attach(session, request.session.session_key)
    return redirect("assessments:my_assessments")


def _card_page(request: HttpRequest, form: CardCodeForm, **notes: bool) -> HttpResponse:
    """Show the card page; a browser without a device cookie is given one."""
    response = render(request, "lessons/card.html", {"form": form, **notes})
    if _device_id(request) is None and device_cookie_may_be_given(client_address(request)):
        response.set_signed_cookie(
            DEVICE_COOKIE,
            device_id_new(),
            salt=DEVICE_COOKIE_SALT,
            max_age=DEVICE_COOKIE_MAX_AGE,
            path=reverse("lessons:card"),
            secure=settings.SESSION_COOKIE_SECURE,
            httponly=True,
            samesite="Lax",
        )
    return response


def _refused(request: HttpRequest, outcome: Outcome) -> HttpResponse:
    """Say "ask your teacher", the same for every reason: it names no pupil or group.

    Nor any school, but the only one (portal/context_processors.only_school_name).
    """
    status = 429 if outcome is Outcome.TOO_MANY else 403
    return render(
        request,
        "lessons/card_refused.html",
        {"too_many": outcome is Outcome.TOO_MANY},
        status=status,
    )
