"""Forms of bulk registration: they check the request; the file itself is checked by a service."""

from django import forms
from django.utils.translation import gettext_lazy as _


class ImportUploadForm(forms.Form):
    """Upload a CSV file of learners; `replaces` names a preview the new file corrects."""

    file = forms.FileField(
        label=_("CSV file of learners"),
        # Translators: The column names are those of the file: keep them as they are.
        help_text=_(
            "Columns: username, password, dob, email, first_name, last_name, level. Only "
            "username and dob are required; leave password empty to have one generated."
        ),
        error_messages={
            "required": _("Choose a CSV file to upload."),
            "empty": _("The file is empty. Download the template and fill it in."),
        },
        widget=forms.FileInput(attrs={"accept": ".csv,text/csv"}),
    )
    replaces = forms.IntegerField(required=False, widget=forms.HiddenInput)
