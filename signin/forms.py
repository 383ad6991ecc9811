"""The second factor's code forms, throttled as a password is (accounts.sign_in_throttle).

A code guessed is a password guessed: each attempt is counted for the account (and the account
from this address, and the address) before the code is checked, so of simultaneous guesses no
more than the limit are checked, and a wrong code counts as a wrong password does. allauth's
own rate limits are off (MFA_RATE_LIMITS): they would count in another store.
"""

from allauth.core import context
from allauth.mfa.base.forms import AuthenticateForm, ReauthenticateForm
from allauth.mfa.totp.forms import ActivateTOTPForm
from allauth.mfa.webauthn.forms import AddWebAuthnForm
from django.core.exceptions import ValidationError
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.debug import sensitive_variables

from accounts.sign_in_throttle import SignInThrottle, too_many_attempts_message
from kit.addresses import client_address


class ThrottledCodeMixin:
    """Count a code in the sign-in throttle before allauth checks it; refuse it when locked."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        code = self.fields["code"]
        code.label = gettext_lazy("Code")
        code.help_text = gettext_lazy(
            "The 6-digit code your authenticator app shows now, or one of your recovery codes."
        )
        code.error_messages["required"] = gettext_lazy("Enter the code.")
        code.widget.attrs.pop("placeholder", None)
        code.widget.attrs.update({"inputmode": "numeric", "spellcheck": "false"})

    @sensitive_variables("code")
    def clean_code(self) -> str:
        throttle = SignInThrottle(
            username=self.user.get_username(), ip=client_address(context.request)
        )
        if not throttle.reserve():
            raise ValidationError(too_many_attempts_message(), code="throttled")
        try:
            code = super().clean_code()
        except ValidationError:
            throttle.fail(account=self.user)
            raise ValidationError(
                gettext("That code is not right. Enter the code your app shows now."),
                code="incorrect_code",
            ) from None
        throttle.succeed()
        return code


class ThrottledAuthenticateForm(ThrottledCodeMixin, AuthenticateForm):
    """The code asked for after the password or school account, at sign-in."""


class ThrottledReauthenticateForm(ThrottledCodeMixin, ReauthenticateForm):
    """The code asked for again before the most sensitive pages (step-up)."""


class SetupCodeForm(ActivateTOTPForm):
    """The first code from a new authenticator app, in the portal's words."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        code = self.fields["code"]
        code.label = gettext_lazy("Enter the 6-digit code your app shows")
        code.error_messages["required"] = gettext_lazy("Enter the code your app shows.")
        code.widget.attrs.pop("placeholder", None)
        code.widget.attrs.update({"inputmode": "numeric", "spellcheck": "false"})


class PasskeyForm(AddWebAuthnForm):
    """A new passkey or security key, with a name to tell it from the others."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        name = self.fields["name"]
        name.label = gettext_lazy("A name for it")
        name.help_text = gettext_lazy(
            "So that you can tell your keys apart, for example \u201cWork laptop\u201d."
        )
