"""The sign-in form, and the new-password fields every form that sets a password shares."""

from django import forms
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.debug import sensitive_variables

from accounts.access import learner_account
from accounts.password_sign_in import password_sign_in_off
from accounts.sign_in_throttle import (
    PASSWORD_MAX_LENGTH,
    sign_in_locked,
    too_many_attempts_message,
)
from accounts.usernames import USERNAME_MAX_LENGTH, username_normal_form
from kit.forms import ClearRequiredMessages
from partner_api.levels import Level
from schools.models import PartnerSettings


class SignInForm(ClearRequiredMessages, AuthenticationForm):
    """Django's sign-in form with messages that name the missing field, and say a lock."""

    # The same words for an unknown username, a wrong password and an inactive account.
    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": gettext_lazy("Enter a correct username and password."),
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["username"].label = gettext("Username")
        # No autofocus (Django sets it): the first Tab must reach the skip link, and a screen
        # reader starts at the page's heading, not in the middle of the form.
        self.fields["username"].widget.attrs.pop("autofocus", None)
        self.fields["username"].error_messages["required"] = gettext("Enter your username.")
        self.fields["password"].error_messages["required"] = gettext("Enter your password.")

    @sensitive_variables()
    def clean(self) -> dict:
        try:
            return super().clean()
        except ValidationError:
            # The backend refuses a locked username or IP (accounts.auth); say so, to anyone
            # trying that username, whether or not it exists.
            username = self.cleaned_data.get("username")
            if username and sign_in_locked(username=username, request=self.request):
                raise ValidationError(too_many_attempts_message(), code="throttled") from None
            # Counted as a failure by the backend like any other; the field says what is wrong.
            if username and len(username_normal_form(username)) > USERNAME_MAX_LENGTH:
                raise ValidationError(
                    {
                        "username": gettext(
                            "A username has at most %(limit)d characters: check what is in "
                            "the username box."
                        )
                        % {"limit": USERNAME_MAX_LENGTH}
                    }
                ) from None
            if len(self.cleaned_data.get("password") or "") > PASSWORD_MAX_LENGTH:
                raise ValidationError(
                    {
                        "password": gettext("A password has at most %(limit)d characters.")
                        % {"limit": PASSWORD_MAX_LENGTH}
                    }
                ) from None
            raise

    def confirm_login_allowed(self, user) -> None:
        super().confirm_login_allowed(user)
        learner = learner_account(user)
        if (
            learner is not None
            and learner.level == Level.PRIMARY
            and PartnerSettings.of(learner.school_id).primary_cards_only
        ):
            # Said only after the right password, so it tells a guesser nothing.
            raise ValidationError(
                gettext(
                    "Primary pupils sign in with their sign-in card. Ask your teacher to open "
                    "sign-in for your class."
                ),
                code="card_only",
            )
        if password_sign_in_off(user):
            # As above: only after the right password.
            raise ValidationError(
                gettext(
                    "Your school's staff sign in with their school account, not a password. "
                    "Use the button for your school account on this page."
                ),
                code="school_account_only",
            )


PASSWORD_RULES = gettext_lazy("At least 8 characters, not a common password and not only digits.")


def new_password_field(label: str, *, with_rules: bool = False) -> forms.CharField:
    """Return a field for a new password: never stripped, offered by password managers."""
    return forms.CharField(
        label=label,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text=PASSWORD_RULES if with_rules else "",
    )


@sensitive_variables()
def new_password_check(form: forms.Form, *, first: str, again: str | None = None, person) -> None:
    """Add the errors of a new password (typed twice if `again`): a mismatch, or the validators'.

    `person` is an unsaved user carrying the names the similarity check compares with.
    """
    password = form.cleaned_data.get(first)
    repeated = form.cleaned_data.get(again) if again else password
    if password and repeated and password != repeated:
        form.add_error(again, gettext("The two passwords do not match. Type it again."))
    elif password:
        try:
            validate_password(password, user=person)
        except ValidationError as error:
            form.add_error(first, error)
