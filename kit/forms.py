"""Form helpers shared by every page: error messages that make sense on their own."""

from django import forms
from django.utils.functional import lazy
from django.utils.translation import gettext


def _required_message(choose: bool, label: object) -> str:
    """Say which field is missing, in the language of the request that shows the error."""
    label = str(label).lower()
    if choose:
        # Translators: A required choice was left empty; %(label)s is the field's label in
        # lower case, e.g. "Choose the level."
        return gettext("Choose the %(label)s.") % {"label": label}
    # Translators: A required field was left empty; %(label)s is the field's label in lower
    # case, e.g. "Enter the date of birth."
    return gettext("Enter the %(label)s.") % {"label": label}


# Lazy: some forms' fields are set up once at import time (imports.checks), and the
# message must be translated when it is shown, not then.
_required_message_lazy = lazy(_required_message, str)


class ClearRequiredMessages:
    """Say which field is missing ("Enter the username"), so the error summary reads alone.

    A form names its required fields' messages whole in `required_messages` (a translator
    needs the whole sentence: articles and capitals depend on the noun); any other field gets
    one made from its label.
    """

    required_messages: dict[str, str] = {}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, field in self.fields.items():
            choose = isinstance(field, forms.ChoiceField)
            field.error_messages["required"] = self.required_messages.get(
                name
            ) or _required_message_lazy(choose, self[name].label)
