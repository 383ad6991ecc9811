"""Form helpers shared by every page: error messages that make sense on their own."""

from django import forms
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.views.decorators.debug import sensitive_variables

from portal.auth import sign_in_locked, too_many_attempts_message


class ClearRequiredMessages:
    """Say which field is missing ("Enter the username"), so the error summary reads alone."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, field in self.fields.items():
            label = str(self[name].label).lower()
            verb = "Choose" if isinstance(field, forms.ChoiceField) else "Enter"
            field.error_messages["required"] = f"{verb} the {label}."


class SignInForm(ClearRequiredMessages, AuthenticationForm):
    """Django's sign-in form with messages that name the missing field, and say a lock."""

    # The same words for an unknown username, a wrong password and an inactive account.
    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": "Enter a correct username and password.",
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["username"].label = "Username"
        self.fields["username"].error_messages["required"] = "Enter your username."
        self.fields["password"].error_messages["required"] = "Enter your password."

    @sensitive_variables()
    def clean(self) -> dict:
        try:
            return super().clean()
        except ValidationError:
            # The backend refuses a locked username or IP (portal.auth); say so, to anyone
            # trying that username, whether or not it exists.
            username = self.cleaned_data.get("username")
            if username and sign_in_locked(username=username, request=self.request):
                raise ValidationError(too_many_attempts_message(), code="throttled") from None
            raise
