"""The second factor staff give at sign-in, and again before the most sensitive pages.

django-allauth keeps, in the session, a record of each way the person proved who they are
(a password, a school account, a second factor) and when. Staff (every account that is not a
learner's) must have given a second factor this session while STAFF_MFA_REQUIRED is on:
until then they reach only the pages that ask for one or set one up, the Django admin
included. Step-up pages ask again once the last one is older than MFA_STEP_UP_MINUTES.
"""

import time
from collections.abc import Callable
from functools import wraps

from allauth.account.internal.flows.login import get_authentication_records
from allauth.account.internal.flows.reauthentication import suspend_request
from allauth.mfa.models import Authenticator
from allauth.socialaccount.models import SocialAccount
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _

from accounts.access import learner_account
from signin.providers import offered_providers

# Second factors that count at sign-in (recovery codes only stand in for a lost one).
FACTORS = (Authenticator.Type.TOTP, Authenticator.Type.WEBAUTHN)
# allauth's records of a second factor: its own, and a provider's that we trusted (signin.adapter).
MFA_METHOD = "mfa"


def is_staff_account(user) -> bool:
    """Return whether the signed-in user must give a second factor: anyone but a learner."""
    return user.is_authenticated and learner_account(user) is None


def has_second_factor(user) -> bool:
    """Return whether the user has set up an authenticator app or a passkey."""
    return Authenticator.objects.filter(user_id=user.pk, type__in=FACTORS).exists()


def second_factor_given_at(request: HttpRequest) -> float | None:
    """Return when (a Unix time) this session last gave a second factor, or None."""
    times = [
        record.get("at", 0)
        for record in get_authentication_records(request, request.user)
        if record.get("method") == MFA_METHOD
    ]
    return max(times) if times else None


def _open_to_anyone_pending(path: str) -> bool:
    """Return whether a path stays open before the second factor: signing in or out."""
    return path.startswith((reverse("logout"), reverse("login"), settings.STATIC_URL))


def _gives_a_factor(path: str) -> bool:
    """Return whether the page asks for a factor already set up (and nothing else)."""
    return path in (
        reverse("mfa_authenticate"),
        reverse("mfa_reauthenticate"),
        reverse("mfa_reauthenticate_webauthn"),
    )


def _sets_up_a_factor(path: str) -> bool:
    """Return whether the page sets up a first factor (or asks the password again for it)."""
    return path.startswith((reverse("mfa_index"), reverse("account_reauthenticate")))


class SecondFactorMiddleware:
    """Send staff without a second factor this session to give one, or to set one up."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if (
            request.user.is_authenticated
            and not is_staff_account(request.user)
            and request.path.startswith((reverse("mfa_index"), reverse("account_reauthenticate")))
        ):
            # Learners give no second factor, and never a password again: not their pages.
            raise Http404
        if (
            settings.STAFF_MFA_REQUIRED
            and is_staff_account(request.user)
            and not _open_to_anyone_pending(request.path)
            and second_factor_given_at(request) is None
        ):
            if has_second_factor(request.user):
                # Only the factor they have: not a new one, nor new recovery codes, which
                # would let a password alone stand in for it.
                if _gives_a_factor(request.path):
                    return self.get_response(request)
                # A plain redirect, never a POST kept for later: this runs before the CSRF
                # check, and allauth replays a kept POST without one.
                return _redirect_back_after(step_up_url(request.user), request)
            if _sets_up_a_factor(request.path):
                return self.get_response(request)
            messages.info(
                request,
                _(
                    "Every member of staff gives a second factor when they sign in. Set one "
                    "up now: an authenticator app, or a passkey or security key."
                ),
            )
            return redirect("mfa_index")
        return self.get_response(request)


def _redirect_back_after(url: str, request: HttpRequest) -> HttpResponse:
    """Send to `url`, which comes back to this page (its address, by GET) afterwards."""
    return redirect(f"{url}?{urlencode({REDIRECT_FIELD_NAME: request.get_full_path()})}")


def step_up_url(user) -> str:
    """Return the page that asks this user for their second factor again."""
    types = set(
        Authenticator.objects.filter(user_id=user.pk, type__in=FACTORS).values_list(
            "type", flat=True
        )
    )
    if not types and settings.SSO_TRUST_PROVIDER_MFA:
        # No factor of their own: their provider's second factor stood for one, so they give
        # it again by signing in there (allauth has no provider re-check to offer instead).
        provider_url = provider_sign_in_url(user)
        if provider_url is not None:
            return provider_url
    if Authenticator.Type.TOTP not in types and Authenticator.Type.WEBAUTHN in types:
        return reverse("mfa_reauthenticate_webauthn")
    return reverse("mfa_reauthenticate")


def provider_sign_in_url(user) -> str | None:
    """Return where the user's linked school identity signs in, if a provider offers it."""
    linked = set(SocialAccount.objects.filter(user_id=user.pk).values_list("provider", flat=True))
    return next((p.url for p in offered_providers() if p.id in linked), None)


def step_up_due(request: HttpRequest) -> bool:
    """Return whether a sensitive page must ask for the second factor again first."""
    if not is_staff_account(request.user):
        return False
    given = second_factor_given_at(request)
    if given is None and not settings.STAFF_MFA_REQUIRED:
        # A developer's machine, signed in without one (allauth asks anyone who has one at
        # sign-in): nothing to ask again, and no query on every page to find that out.
        return False
    return given is None or time.time() - given > settings.MFA_STEP_UP_MINUTES * 60


def step_up_required(view: Callable) -> Callable:
    """Ask for the second factor again, then go on with the request (a POST too)."""

    @wraps(view)
    def checked(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if step_up_due(request):
            return suspend_request(request, step_up_url(request.user))
        return view(request, *args, **kwargs)

    return checked
