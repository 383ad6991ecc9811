"""The sign-in page: a username and a password, then django-allauth's steps (the second factor)."""

from allauth.account.internal.flows.login import perform_password_login
from allauth.account.models import Login
from django.contrib.auth import views as auth_views
from django.http import HttpResponse

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
