"""The sign-in page: a username and a password, then django-allauth's steps (the second factor)."""

import functools
import logging
from collections.abc import Callable

from allauth.account.internal.flows.login import perform_password_login
from allauth.account.models import Login
from allauth.mfa.adapter import get_adapter as get_mfa_adapter
from allauth.mfa.webauthn.views import RemoveWebAuthnView
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from accounts.forms import SignInForm
from signin.providers import offered_providers

logger = logging.getLogger(__name__)

# Seconds a browser (or a person) should wait before trying an unreachable provider again.
PROVIDER_RETRY_AFTER = 120


def provider_reachable(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Answer a provider's sign-in or return with a 503 page when the provider is unreachable.

    allauth fetches the discovery document (and on the return the token and keys) while the
    request waits, and lets a failed fetch through as a 500. requests' errors are OSErrors
    (signin never imports requests: only the API client's transport does); an unreadable
    discovery document is a ValueError.
    """

    @functools.wraps(view)
    def reachable(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except (OSError, ValueError) as failure:
            # The class only: a message may carry an address with a code or state in it.
            logger.warning(
                "School sign-in provider %s unreachable: %s",
                kwargs.get("provider_id") or request.resolver_match.url_name,
                type(failure).__name__,
            )
            page = render(request, "signin/provider_unavailable.html", status=503)
            page["Retry-After"] = str(PROVIDER_RETRY_AFTER)
            return page

    return reachable


class SignInView(auth_views.LoginView):
    """Django's sign-in form (fields `username`, `password`), handing over to allauth's login.

    allauth runs its login steps (a second factor, for staff who have one) before anyone is
    signed in, as it does after a school account's sign-in.
    """

    authentication_form = SignInForm
    redirect_authenticated_user = True

    def form_valid(self, form: SignInForm) -> HttpResponse:
        user = form.get_user()
        return perform_password_login(
            self.request,
            {"username": user.get_username()},
            Login(user=user, redirect_url=self.get_success_url()),
        )

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["providers"] = offered_providers()
        return context


class RemovePasskeyView(RemoveWebAuthnView):
    """allauth's removal of a passkey, keeping a member of staff's last second factor."""

    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["can_delete"] = get_mfa_adapter().can_delete_authenticator(self.object)
        return context

    def form_valid(self, form) -> HttpResponse:
        adapter = get_mfa_adapter()
        if not adapter.can_delete_authenticator(self.get_object()):
            messages.error(self.request, adapter.error_messages["cannot_delete_authenticator"])
            return redirect("mfa_list_webauthn")
        return super().form_valid(form)
