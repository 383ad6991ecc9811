"""Naming a group in a form or a file: by its id (a select) or by its name (a person or a CSV)."""

from django import forms
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.utils.translation import gettext as _

from learners.models import SchoolGroup, current_academic_year


def group_named(groups: QuerySet[SchoolGroup], name: str) -> SchoolGroup | None:
    """Return the group of this name among `groups`, this academic year's first, or None."""
    matches = [group for group in groups if group.name.casefold() == name.strip().casefold()]
    year = current_academic_year()
    matches.sort(
        key=lambda group: (group.academic_year != year, group.academic_year), reverse=False
    )
    return matches[0] if matches else None


class GroupChoiceField(forms.ModelChoiceField):
    """A group chosen from a list, or typed by name ("7B") by a script posting the form."""

    def to_python(self, value):
        if value in self.empty_values:
            return None
        text = str(value).strip()
        if not text.isdigit():
            group = group_named(self.queryset, text)
            if group is None:
                raise ValidationError(
                    _("There is no group called %(name)s that you can add learners to.")
                    % {"name": text},
                    code="invalid_choice",
                )
            return group
        return super().to_python(text)

    def label_from_instance(self, group: SchoolGroup) -> str:
        return f"{group.name} ({group.academic_year})"
