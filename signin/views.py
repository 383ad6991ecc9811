"""The sign-in page: a username and a password, then django-allauth's steps (the second factor)."""

from allauth.account.internal.flows.login import perform_password_login
from allauth.account.models import Login
from allauth.mfa.adapter import get_adapter as get_mfa_adapter
from allauth.mfa.webauthn.views import RemoveWebAuthnView
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import HttpResponse
from django.shortcuts import redirect

from accounts.forms import SignInForm
from signin.providers import offered_providers


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
