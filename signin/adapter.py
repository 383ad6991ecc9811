"""How django-allauth behaves in the portal: nobody signs up, and school identities only link."""

from allauth.account.adapter import DefaultAccountAdapter
from allauth.mfa.adapter import DefaultMFAAdapter
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter

# allauth's own notices that repeat what the page already shows.
QUIET_MESSAGES = frozenset({"account/messages/logged_in.txt", "account/messages/logged_out.txt"})


class PortalAccountAdapter(DefaultAccountAdapter):
    """Accounts are made by staff (or the roster), never by signing up."""

    def is_open_for_signup(self, request) -> bool:
        return False

    def add_message(self, request, level, message_template=None, *args, **kwargs) -> None:
        if message_template in QUIET_MESSAGES:
            return
        super().add_message(request, level, message_template, *args, **kwargs)


class PortalMFAAdapter(DefaultMFAAdapter):
    """The second factor's words and limits in the portal."""


class SchoolIdentityAdapter(DefaultSocialAccountAdapter):
    """A school identity signs in to the one account it names, or is refused."""

    def is_open_for_signup(self, request, sociallogin) -> bool:
        return False
