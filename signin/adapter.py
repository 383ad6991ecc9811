"""How django-allauth behaves in the portal: nobody signs up, and school identities only link."""

import time

import segno
from allauth.account import app_settings as account_settings
from allauth.account.adapter import DefaultAccountAdapter
from allauth.core import context
from allauth.core.exceptions import ImmediateHttpResponse, SignupClosedException
from allauth.mfa.adapter import DefaultMFAAdapter
from allauth.mfa.models import Authenticator
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from allauth.socialaccount.models import SocialApp, SocialLogin
from allauth.socialaccount.providers.base import AuthProcess
from django.conf import settings
from django.http import Http404, HttpRequest
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _

from accounts.password_sign_in import password_sign_in_off
from signin.claims import school_identity
from signin.identities import (
    IdentityRefused,
    Refusal,
    identity_account,
    identity_linked_record,
    identity_refused_record,
)
from signin.second_factor import (
    FACTORS,
    has_second_factor,
    is_staff_account,
    second_factor_given_at,
)

# allauth's own notices that repeat what the page already shows.
QUIET_MESSAGES = frozenset({"account/messages/logged_in.txt", "account/messages/logged_out.txt"})

# allauth's second-factor step, and the portal's, which may take a trusted provider's word.
ALLAUTH_AUTHENTICATE_STAGE = "allauth.mfa.stages.AuthenticateStage"
PORTAL_AUTHENTICATE_STAGE = "signin.stages.ProviderTrustedAuthenticateStage"


class PortalAccountAdapter(DefaultAccountAdapter):
    """Accounts are made by staff (or the roster), never by signing up."""

    def is_open_for_signup(self, request) -> bool:
        return False

    def add_message(self, request, level, message_template=None, *args, **kwargs) -> None:
        if message_template in QUIET_MESSAGES:
            return
        super().add_message(request, level, message_template, *args, **kwargs)

    def get_login_stages(self) -> list[str]:
        return [
            PORTAL_AUTHENTICATE_STAGE if stage == ALLAUTH_AUTHENTICATE_STAGE else stage
            for stage in super().get_login_stages()
        ]

    def is_reauthentication_required(self, *, app: str, **kwargs) -> bool:
        """Let a member of staff set up their first second factor without signing in again.

        Until then they reach nothing else (signin.second_factor), however long setting up
        takes, and someone who signed in with their school account alone has no password to
        give. Whoever has a factor gives it again first, unless they gave it moments ago (the
        factor itself, never a password: allauth counts only its re-checks as recent).
        """
        required = super().is_reauthentication_required(app=app, **kwargs)
        if required and app == "allauth.mfa" and context.request is not None:
            request = context.request
            if not request.user.is_authenticated:
                return required
            if not has_second_factor(request.user):
                return False
            given = second_factor_given_at(request)
            return given is None or time.time() - given >= account_settings.REAUTHENTICATION_TIMEOUT
        return required

    def get_reauthentication_methods(self, user) -> list[dict]:
        """Ask whoever has a second factor for it, never for the password instead.

        The step-up pages want a second factor (signin.second_factor); a password given in its
        place would send the person round again.
        """
        methods = super().get_reauthentication_methods(user)
        if user.is_authenticated and (has_second_factor(user) or password_sign_in_off(user)):
            # (Nor where the school turned staff passwords off: the password is not a way in.)
            methods = [method for method in methods if method["id"] != "reauthenticate"]
        return methods


class PortalMFAAdapter(DefaultMFAAdapter):
    """The second factor's words and limits in the portal."""

    error_messages = {
        **DefaultMFAAdapter.error_messages,
        "cannot_delete_authenticator": _(
            "Every member of staff keeps a second factor. Add another authenticator app or "
            "passkey before you remove this one."
        ),
        "incorrect_code": _("That code is not right. Enter the code your app shows now."),
    }

    def build_totp_svg(self, url: str) -> str:
        """Draw the setup QR code with segno, as the portal's other QR codes are drawn."""
        return segno.make_qr(url, error="m").svg_inline(scale=4, border=4, omitsize=True)

    def can_delete_authenticator(self, authenticator: Authenticator) -> bool:
        """Keep a member of staff's last authenticator app or passkey while MFA is required."""
        if not settings.STAFF_MFA_REQUIRED or authenticator.type not in FACTORS:
            return True
        if not is_staff_account(authenticator.user):
            return True
        others = Authenticator.objects.filter(user_id=authenticator.user_id, type__in=FACTORS)
        return others.exclude(pk=authenticator.pk).exists()


class SchoolIdentityAdapter(DefaultSocialAccountAdapter):
    """A school identity signs in to the one account it names, or is refused."""

    def is_open_for_signup(self, request, sociallogin) -> bool:
        return False

    def is_auto_signup_allowed(self, request, sociallogin) -> bool:
        return False

    def get_app(self, request, provider, client_id=None):
        """Return the provider's settings; a provider the environment did not set up is a 404."""
        try:
            return super().get_app(request, provider, client_id=client_id)
        except SocialApp.DoesNotExist:
            raise Http404 from None

    def save_user(self, request, sociallogin, form=None):
        # Never reached (signup is closed); should a later allauth reach it, it makes nothing.
        raise SignupClosedException()

    def pre_social_login(self, request: HttpRequest, sociallogin: SocialLogin) -> None:
        """Let the identity through to its account (linking it the first time), or refuse it."""
        account = sociallogin.account
        identity = school_identity(account.provider, account.extra_data)
        linked = sociallogin.user if sociallogin.is_existing else None
        try:
            user = identity_account(identity, linked=linked)
            connecting = sociallogin.state.get("process") == AuthProcess.CONNECT
            if connecting and user.pk != request.user.pk:
                raise IdentityRefused(Refusal.OTHER_ACCOUNT)
        except IdentityRefused as refusal:
            identity_refused_record(request, identity, refusal)
            page = render(request, "signin/refused.html", {"refusal": refusal.words}, status=403)
            raise ImmediateHttpResponse(page) from refusal
        if linked is None:
            sociallogin.connect(request, user)
            identity_linked_record(request, identity, user)
