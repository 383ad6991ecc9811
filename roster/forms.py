"""Forms of the roster pages: they check the request; the files themselves are read by a service."""

import zipfile

from django import forms
from django.conf import settings
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext_lazy as _

from roster.grades import grade_table_parse
from schools.models import PartnerSettings


class RosterUploadForm(forms.Form):
    """One zip file of the school's records (OneRoster CSV)."""

    file = forms.FileField(
        label=_("Zip file of the school's records (OneRoster CSV)"),
        help_text=_(
            "The zip your management information system exports for OneRoster, version 1.1 or "
            "1.2: manifest.csv with users.csv, classes.csv, enrollments.csv and the others."
        ),
        error_messages={
            "required": _("Choose a zip file to upload."),
            "empty": _("The file is empty. Export the records again and upload the zip."),
        },
        widget=forms.FileInput(attrs={"accept": ".zip,application/zip"}),
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        limit = settings.ROSTER_MAX_UPLOAD_BYTES
        if upload.size > limit:
            raise forms.ValidationError(
                _("The file is %(size)s: the most the portal takes is %(limit)s."),
                params={"size": filesizeformat(upload.size), "limit": filesizeformat(limit)},
            )
        if not zipfile.is_zipfile(upload):
            raise forms.ValidationError(
                _(
                    "“%(name)s” is not a zip file. Upload the zip the export made, with "
                    "manifest.csv inside, as it is."
                ),
                params={"name": upload.name},
            )
        upload.seek(0)
        return upload


class RosterGradesForm(forms.ModelForm):
    """How a school's grades map to levels, and what the roster makes for its pupils."""

    class Meta:
        model = PartnerSettings
        fields = ["roster_grade_levels", "roster_further_education", "roster_made_passwords"]
        widgets = {
            "roster_grade_levels": forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
        }
        help_texts = {
            "roster_grade_levels": _(
                "One grade a line, as grade = level, for example: S1 = secondary. The level is "
                "primary, secondary or further education. Grades you leave out take the "
                "defaults below."
            ),
            "roster_further_education": _(
                "A college: every student is in further education, whatever their grade."
            ),
            "roster_made_passwords": _(
                "Off: the roster's pupils sign in only with a sign-in card or their school "
                "account, and no slips are printed."
            ),
        }

    def clean_roster_grade_levels(self) -> str:
        text = self.cleaned_data["roster_grade_levels"]
        _table, errors = grade_table_parse(text)
        if errors:
            raise forms.ValidationError(errors)
        return text.strip()
