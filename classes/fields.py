"""Naming a group in a form or a file: by its id (a select) or by its name (a person or a CSV)."""

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from classes.models import SchoolGroup
from classes.selectors import groups_by_name


class GroupChoiceField(forms.ModelChoiceField):
    """A group chosen from a list, or typed by name ("7B") by a script posting the form."""

    def to_python(self, value):
        if value in self.empty_values:
            return None
        text = str(value).strip()
        if not text.isdigit():
            pk = groups_by_name(self.queryset).get(text.casefold())
            if pk is None:
                raise ValidationError(
                    _("There is no group called %(name)s that you can add learners to.")
                    % {"name": text},
                    code="invalid_choice",
                )
            return self.queryset.get(pk=pk)
        return super().to_python(text)

    def label_from_instance(self, group: SchoolGroup) -> str:
        return f"{group.name} ({group.academic_year})"
