"""What the portal does when allauth's second-factor steps happen."""

from allauth.account.internal.flows.login import record_authentication
from allauth.mfa.models import Authenticator
from django.http import HttpRequest

from signin.second_factor import FACTORS, MFA_METHOD


def second_factor_set_up(
    sender, request: HttpRequest, user, authenticator: Authenticator, **kwargs
) -> None:
    """Count a first factor just set up as given this session: setting it up proved it.

    Only the first: with one already, the session must have given it (signin.second_factor),
    so that a password alone never adds a factor that then stands in for the one it has.
    """
    if authenticator.type not in FACTORS or request is None:
        return
    if Authenticator.objects.filter(user_id=user.pk, type__in=FACTORS).count() == 1:
        record_authentication(request, user, MFA_METHOD, type=authenticator.type, setup=True)
