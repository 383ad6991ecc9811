"""Forms of the group pages: a group's details and staff, and finding learners to add."""

import re

from django import forms
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from classes.models import SchoolGroup, current_academic_year
from classes.services import level_differs
from kit.forms import ClearRequiredMessages
from kit.names import validate_name
from partner_api.levels import Level

ACADEMIC_YEAR = re.compile(r"^(\d{4})/(\d{2})$")


class StaffChoiceField(forms.ModelMultipleChoiceField):
    """Staff accounts, named as people know them."""

    def label_from_instance(self, user) -> str:
        full = user.get_full_name()
        return f"{full} ({user.get_username()})" if full else user.get_username()


class GroupForm(ClearRequiredMessages, forms.ModelForm):
    """A group's name, kind, level, academic year, who its pupils talk to, and its staff."""

    required_messages = {
        "name": gettext_lazy("Enter the group's name."),
        "level": gettext_lazy("Choose the level."),
    }

    staff = StaffChoiceField(
        queryset=get_user_model().objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label=gettext_lazy("Staff who work with this group"),
        help_text=gettext_lazy("They see its learners; what they see of results depends on role."),
    )

    class Meta:
        model = SchoolGroup
        fields = ["name", "level", "kind", "academic_year", "contact"]
        labels = {
            "name": gettext_lazy("Name"),
            "level": gettext_lazy("Level"),
            "kind": gettext_lazy("Kind of group"),
            "academic_year": gettext_lazy("Academic year"),
            "contact": gettext_lazy("Who its pupils can talk to (optional)"),
        }
        help_texts = {
            "name": gettext_lazy("As the school says it, for example 7B or Year 9."),
            "academic_year": gettext_lazy("For example 2026/27."),
            "contact": gettext_lazy(
                "Shown to this group's pupils with their results, for example: Mr Osei, your "
                "form tutor, in room 4. Left empty, they see the school's contact from the "
                "settings."
            ),
        }

    def __init__(self, *args, staff_accounts: QuerySet, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["level"].required = True
        self.fields["level"].choices = [("", _("Choose a level")), *Level.choices]
        # A plain POST of name and level (a script, a check) makes a teaching class this year.
        self.fields["kind"].required = False
        self.fields["academic_year"].required = False
        if not self.instance.pk:
            self.fields["academic_year"].initial = current_academic_year()
        self.fields["staff"].queryset = staff_accounts
        if self.instance.pk:
            self.fields["staff"].initial = list(
                self.instance.staff_links.values_list("user_id", flat=True)
            )

    def clean_name(self) -> str:
        name = " ".join(self.cleaned_data["name"].split())
        validate_name(name)  # shown to staff and pupils as a name: nothing reversed or blank
        return name

    def clean_contact(self) -> str:
        return " ".join(self.cleaned_data["contact"].split())

    def clean_kind(self) -> str:
        return self.cleaned_data["kind"] or SchoolGroup.Kind.TEACHING_CLASS

    def clean_academic_year(self) -> str:
        year = self.cleaned_data["academic_year"].strip() or current_academic_year()
        match = ACADEMIC_YEAR.match(year)
        if not match or (int(match[1]) + 1) % 100 != int(match[2]):
            raise ValidationError(
                _("Enter the academic year as two years, like %(example)s.")
                % {"example": current_academic_year()}
            )
        return year

    def validate_unique(self) -> None:
        name, year = self.cleaned_data.get("name"), self.cleaned_data.get("academic_year")
        if name and year:
            clash = SchoolGroup.objects.filter(
                school_id=self.instance.school_id, name__iexact=name, academic_year=year
            )
            if self.instance.pk:
                clash = clash.exclude(pk=self.instance.pk)
            if clash.exists():
                self.add_error(
                    "name",
                    _("There is already a group called %(name)s in %(year)s.")
                    % {"name": name, "year": year},
                )


class LearnerPickForm(forms.Form):
    """Learners chosen (by checkbox) from a search, to add to a group."""

    learners = forms.ModelMultipleChoiceField(
        queryset=None,
        widget=forms.CheckboxSelectMultiple,
        label=gettext_lazy("Learners to add"),
        error_messages={"required": gettext_lazy("Choose at least one learner to add.")},
    )

    # Ticked by "Add anyway": learners of another level than the group's join too.
    confirm = forms.BooleanField(required=False)

    def __init__(self, *args, candidates: QuerySet, group: SchoolGroup, **kwargs):
        super().__init__(*args, **kwargs)
        self.group = group
        self.fields["learners"].queryset = candidates
        self.fields["learners"].label_from_instance = _learner_label

    def candidates(self) -> list[tuple[object, object, bool]]:
        """Return each checkbox with its learner and whether their level is not the group's."""
        rows = []
        for choice in self["learners"]:
            learner = choice.data["value"].instance
            rows.append((choice, learner, level_differs(self.group, learner)))
        return rows


def _learner_label(learner) -> str:
    """Name a learner as staff know them."""
    return f"{learner.display_name} ({learner.username})"
