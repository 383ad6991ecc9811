"""Form helpers shared by every page: error messages that make sense on their own."""

from django import forms
from django.contrib.auth.forms import AuthenticationForm


class ClearRequiredMessages:
    """Say which field is missing ("Enter the username"), so the error summary reads alone."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, field in self.fields.items():
            label = str(self[name].label).lower()
            verb = "Choose" if isinstance(field, forms.ChoiceField) else "Enter"
            field.error_messages["required"] = f"{verb} the {label}."


class SignInForm(ClearRequiredMessages, AuthenticationForm):
    """Django's sign-in form with messages that name the missing field."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["username"].label = "Username"
        self.fields["username"].error_messages["required"] = "Enter your username."
        self.fields["password"].error_messages["required"] = "Enter your password."
