"""Forms of bulk registration: they check the request; the file itself is checked by a service."""

from django import forms


class ImportUploadForm(forms.Form):
    """Upload a CSV file of learners; `replaces` names a preview the new file corrects."""

    file = forms.FileField(
        label="CSV file of learners",
        help_text=(
            "Columns: username, password, dob, email, first_name, last_name, level. Only "
            "username and dob are required; leave password empty to have one generated."
        ),
        error_messages={
            "required": "Choose a CSV file to upload.",
            "empty": "The file is empty. Download the template and fill it in.",
        },
        widget=forms.FileInput(attrs={"accept": ".csv,text/csv"}),
    )
    replaces = forms.IntegerField(required=False, widget=forms.HiddenInput)
