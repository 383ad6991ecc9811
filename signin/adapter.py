"""How django-allauth behaves in the portal: nobody signs up, and school identities only link."""

from allauth.account.adapter import DefaultAccountAdapter
from allauth.core.exceptions import ImmediateHttpResponse, SignupClosedException
from allauth.mfa.adapter import DefaultMFAAdapter
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from allauth.socialaccount.models import SocialLogin
from allauth.socialaccount.providers.base import AuthProcess
from django.http import HttpRequest
from django.shortcuts import render

from signin.claims import school_identity
from signin.identities import (
    IdentityRefused,
    Refusal,
    identity_account,
    identity_linked_record,
    identity_refused_record,
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


class PortalMFAAdapter(DefaultMFAAdapter):
    """The second factor's words and limits in the portal."""


class SchoolIdentityAdapter(DefaultSocialAccountAdapter):
    """A school identity signs in to the one account it names, or is refused."""

    def is_open_for_signup(self, request, sociallogin) -> bool:
        return False

    def is_auto_signup_allowed(self, request, sociallogin) -> bool:
        return False

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
