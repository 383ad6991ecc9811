"""Forms of the follow-up pages: the queue's filters and the changes to one item."""

from datetime import date, timedelta

from django import forms
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from followups.models import FollowUp
from followups.selectors import ALL, ASSIGNED_TO_ME, OPEN, UNASSIGNED
from learners.models import Level

NOTE_MAX_LENGTH = 5000
# A due date further out than this is almost certainly a typing slip (2205 for 2025).
DUE_DATE_MAX_AHEAD = timedelta(days=366)


class FollowUpFilterForm(forms.Form):
    """The queue's filters and sort, read from the query string."""

    status = forms.ChoiceField(
        required=False,
        choices=[(OPEN, "Open (not resolved)"), *FollowUp.Status.choices, (ALL, "All")],
    )
    assignee = forms.ChoiceField(required=False, label="Assigned to")
    area = forms.ChoiceField(required=False, label="Focus area")
    risk_level = forms.ChoiceField(required=False, label="Risk level")
    level = forms.ChoiceField(required=False, choices=[("", "Any level"), *Level.choices])
    overdue = forms.BooleanField(required=False, label="Overdue only")
    sort = forms.ChoiceField(
        required=False,
        label="Sort by",
        choices=[
            ("due", "Due date, soonest first"),
            ("newest", "Newest first"),
            ("risk", "Risk level, highest first"),
        ],  # fmt: skip
    )

    def __init__(self, *args, staff: list, area_names: list[str], risk_levels: list[str], **kw):
        super().__init__(*args, **kw)
        self.fields["assignee"].choices = [
            ("", "Anyone or no one"),
            (ASSIGNED_TO_ME, "Assigned to me"),
            (UNASSIGNED, "Unassigned"),
            *[(str(user.pk), user.get_username()) for user in staff],
        ]
        self.fields["area"].choices = [("", "Any focus area"), *[(n, n) for n in area_names]]
        self.fields["risk_level"].choices = [("", "Any risk level"), *[(r, r) for r in risk_levels]]

    def filters(self) -> dict:
        """Return the valid filters (a bad value is dropped, not an error, as in a link)."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        return {
            "status": data.get("status") or OPEN,
            "assignee": data.get("assignee", ""),
            "area": data.get("area", ""),
            "risk_level": data.get("risk_level", ""),
            "level": data.get("level", ""),
            "overdue": bool(data.get("overdue")),
            "sort": data.get("sort") or "due",
        }


class StaffChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: AbstractBaseUser) -> str:
        full = obj.get_full_name() if hasattr(obj, "get_full_name") else ""
        return f"{full} ({obj.get_username()})" if full else obj.get_username()


class FollowUpUpdateForm(forms.Form):
    """A staff member's changes to one item, and an optional note."""

    status = forms.ChoiceField(choices=FollowUp.Status.choices)
    assignee = StaffChoiceField(
        queryset=None, required=False, label="Assigned to", empty_label="No one (unassigned)"
    )
    due_date = forms.DateField(
        label="Due date",
        help_text="For example, 2026-03-27",
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        error_messages={
            "required": "Enter a due date",
            "invalid": "Enter the due date as a real date, for example 2026-03-27",
        },
    )
    note = forms.CharField(
        required=False,
        label="Add a note (optional)",
        help_text="What was done or agreed. Notes are kept with your name and the date.",
        max_length=NOTE_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 4}),
        error_messages={"max_length": f"Keep the note under {NOTE_MAX_LENGTH} characters"},
    )

    def __init__(self, *args, follow_up: FollowUp, staff, **kwargs):
        initial = {
            "status": follow_up.status,
            "assignee": follow_up.assignee_id,
            "due_date": follow_up.due_date,
        }
        super().__init__(*args, initial=initial, **kwargs)
        self.follow_up = follow_up
        self.fields["assignee"].queryset = staff
        self.fields["assignee"].error_messages["invalid_choice"] = (
            "Choose a member of staff from the list"
        )
        self.fields["status"].error_messages["invalid_choice"] = "Choose a status from the list"

    def clean_due_date(self) -> date:
        due = self.cleaned_data["due_date"]
        opened = timezone.localdate(self.follow_up.created_at)
        if due < opened:
            raise forms.ValidationError(
                f"The due date cannot be before the item was opened ({opened:%Y-%m-%d})"
            )
        if due > timezone.localdate() + DUE_DATE_MAX_AHEAD:
            raise forms.ValidationError("The due date must be within a year from today")
        return due

    def clean(self) -> dict:
        data = super().clean()
        if self.errors:
            return data
        assignee = data.get("assignee")
        unchanged = (
            data.get("status") == self.follow_up.status
            and (assignee.pk if assignee else None) == self.follow_up.assignee_id
            and data.get("due_date") == self.follow_up.due_date
            and not data.get("note", "").strip()
        )
        if unchanged:
            raise forms.ValidationError("Nothing was changed: change a field or add a note")
        return data
