"""The typed card code, the length of a sign-in window, and a reissue's confirmation."""

from django import forms
from django.core.validators import MaxValueValidator
from django.utils.translation import gettext, gettext_lazy

from kit.forms import ClearRequiredMessages
from lessons.card_secrets import CODE_LENGTH, code_normal_form


class CardCodeForm(forms.Form):
    """The code printed under a card's QR code, for a device without a camera."""

    code = forms.CharField(
        label=gettext_lazy("The code on your card"),
        max_length=40,
        help_text=gettext_lazy("Ten letters and numbers, for example ACDEF-HJK34."),
        widget=forms.TextInput(
            attrs={
                "autocomplete": "off",
                "autocapitalize": "characters",
                "spellcheck": "false",
                "class": "code-input",
            }
        ),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["code"].error_messages["required"] = gettext("Type the code on your card.")

    def clean_code(self) -> str:
        code = code_normal_form(self.cleaned_data["code"])
        if len(code) != CODE_LENGTH:
            raise forms.ValidationError(
                gettext("The code has %(count)d letters and numbers. Check it against your card.")
                % {"count": CODE_LENGTH}
            )
        return code


class WindowOpenForm(ClearRequiredMessages, forms.Form):
    """How long card sign-in stays open for the lesson."""

    minutes = forms.IntegerField(label=gettext_lazy("Minutes"), min_value=1)

    def __init__(self, *args, max_minutes: int, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["minutes"]
        field.max_value = max_minutes
        field.validators.append(MaxValueValidator(max_minutes))
        field.widget.attrs.update({"min": 1, "max": max_minutes, "inputmode": "numeric"})
        field.help_text = gettext("At most %(count)d minutes.") % {"count": max_minutes}


class ReissueForm(forms.Form):
    """A deliberate tick before every old card of a group stops working."""

    confirm = forms.BooleanField(
        label=gettext_lazy("Yes: the old cards of this group stop working now"),
        error_messages={"required": gettext_lazy("Tick the box to confirm, or go back.")},
    )
