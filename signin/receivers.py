"""What the portal does when allauth's second-factor steps happen."""

from allauth.account.internal.flows.login import record_authentication
from allauth.mfa.models import Authenticator
from django.http import HttpRequest

from signin.second_factor import FACTORS, MFA_METHOD


def second_factor_set_up(
    sender, request: HttpRequest, user, authenticator: Authenticator, **kwargs
) -> None:
    """Count a factor just set up as given this session: setting it up proved it is theirs."""
    if authenticator.type in FACTORS and request is not None:
        record_authentication(request, user, MFA_METHOD, type=authenticator.type, setup=True)
