"""The second-factor step of allauth's login, which may take a provider's word for it.

With SSO_TRUST_PROVIDER_MFA on, a school sign-in whose ID token says the provider asked for a
second factor (`amr` holds "mfa") counts as one: it is recorded as allauth records its own
(method "mfa", which signin.second_factor reads), and allauth's code is not asked for. Off (the
default), a member of staff with a factor gives allauth's code after the provider.
"""

from allauth.account.internal.flows.login import record_authentication
from allauth.mfa.stages import AuthenticateStage
from allauth.socialaccount.models import SocialLogin
from django.conf import settings

from accounts.access import learner_account
from signin.claims import school_identity
from signin.second_factor import MFA_METHOD

# How the record says where the second factor was given.
PROVIDER_FACTOR = "provider"


def _sociallogin(login) -> SocialLogin | None:
    """Return the school sign-in this login continues, if it is one."""
    sociallogin = (login.signal_kwargs or {}).get("sociallogin")
    return sociallogin if isinstance(sociallogin, SocialLogin) else None


class ProviderTrustedAuthenticateStage(AuthenticateStage):
    """allauth's AuthenticateStage, skipped when a trusted provider gave the second factor."""

    def handle(self) -> tuple:
        if self.login.user is not None and learner_account(self.login.user) is not None:
            return None, True  # pupils give no second factor: no query to find they have none
        sociallogin = _sociallogin(self.login)
        if settings.SSO_TRUST_PROVIDER_MFA and sociallogin is not None and self.login.user:
            account = sociallogin.account
            if school_identity(account.provider, account.extra_data).provider_gave_second_factor:
                record_authentication(
                    self.request,
                    self.login.user,
                    MFA_METHOD,
                    type=PROVIDER_FACTOR,
                    provider=account.provider,
                )
                return None, True
        return super().handle()
