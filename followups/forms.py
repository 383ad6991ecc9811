"""Forms of the follow-up pages: the queue's filters and the changes to one item."""

from collections import Counter
from datetime import date, timedelta

from django import forms
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext, gettext_lazy, ngettext_lazy

from accounts.access import staff_name
from classes.filters import GROUP_PARAM, add_group_filter, group_refused
from followups.models import FollowUp
from followups.selectors import ALL, ASSIGNED_TO_ME, OPEN, UNASSIGNED
from kit.date_fields import DatePartsField
from learners.models import Level

NOTE_MAX_LENGTH = 5000
# A due date further out than this is almost certainly a typing slip (2205 for 2025).
DUE_DATE_MAX_AHEAD = timedelta(days=366)


def staff_menu_names(staff) -> dict[int, str]:
    """Name each member of staff in a menu, adding the username where two share a name."""
    names = {user.pk: staff_name(user) for user in staff}
    counts = Counter(names.values())
    return {
        user.pk: names[user.pk]
        if counts[names[user.pk]] == 1
        else f"{names[user.pk]} ({user.get_username()})"
        for user in staff
    }


class FollowUpFilterForm(forms.Form):
    """The queue's filters and sort, read from the query string."""

    status = forms.ChoiceField(
        required=False,
        label=gettext_lazy("Status"),
        choices=[
            (OPEN, gettext_lazy("Open (not resolved)")),
            *FollowUp.Status.choices,
            (ALL, gettext_lazy("All")),
        ],
    )
    assignee = forms.ChoiceField(required=False, label=gettext_lazy("Assigned to"))
    area = forms.ChoiceField(required=False, label=gettext_lazy("Focus area"))
    risk_level = forms.ChoiceField(required=False, label=gettext_lazy("Risk level"))
    level = forms.ChoiceField(
        required=False,
        label=gettext_lazy("Level"),
        choices=[("", gettext_lazy("Any level")), *Level.choices],
    )
    overdue = forms.BooleanField(required=False, label=gettext_lazy("Overdue only"))
    sort = forms.ChoiceField(
        required=False,
        label=gettext_lazy("Sort by"),
        choices=[
            ("due", gettext_lazy("Due date, soonest first")),
            ("newest", gettext_lazy("Newest first")),
            ("risk", gettext_lazy("Risk level, highest first")),
        ],  # fmt: skip
    )

    def __init__(
        self,
        *args,
        user: AbstractBaseUser,
        staff: list,
        area_names: list[str],
        risk_levels: list[str],
        **kw,
    ):
        super().__init__(*args, **kw)
        add_group_filter(self, user)
        self.fields["assignee"].choices = [
            ("", gettext("Anyone or no one")),
            (ASSIGNED_TO_ME, gettext("Assigned to me")),
            (UNASSIGNED, gettext("Unassigned")),
            *[(str(pk), name) for pk, name in staff_menu_names(staff).items()],
        ]
        self.fields["area"].choices = [
            ("", gettext("Any focus area")),
            *[(n, n) for n in area_names],
        ]
        self.fields["risk_level"].choices = [
            ("", gettext("Any risk level")),
            *[(r, r) for r in risk_levels],
        ]

    @property
    def group_refused(self) -> bool:
        """Return whether a class was asked for that the user may not see: nothing is listed."""
        return group_refused(self)

    def filters(self) -> dict:
        """Return the valid filters (a bad value is dropped, not an error, as in a link).

        A class the user may not see is the exception: see `group_refused`.
        """
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
            "group": data.get(GROUP_PARAM),
        }


class StaffChoiceField(forms.ModelChoiceField):
    names: dict[int, str] = {}

    def label_from_instance(self, obj: AbstractBaseUser) -> str:
        return self.names.get(obj.pk) or staff_name(obj)


class FollowUpUpdateForm(forms.Form):
    """A staff member's changes to one item, and an optional note."""

    status = forms.ChoiceField(label=gettext_lazy("Status"), choices=FollowUp.Status.choices)
    assignee = StaffChoiceField(
        queryset=None,
        required=False,
        label=gettext_lazy("Assigned to"),
        empty_label=gettext_lazy("No one (unassigned)"),
    )
    due_date = DatePartsField(
        label=gettext_lazy("Due date"),
        help_text=gettext_lazy("For example, 27 3 2026"),
        error_messages={
            "required": gettext_lazy("Enter a due date"),
            # Only for a date sent whole, as scripts do; the boxes have their own messages.
            "invalid": gettext_lazy("Enter the due date as a real date, for example 2026-03-27"),
        },
    )
    note = forms.CharField(
        required=False,
        label=gettext_lazy("Add a note (optional)"),
        help_text=gettext_lazy(
            "What was done or agreed. Notes are kept with your name and the date."
        ),
        max_length=NOTE_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 4}),
        # The length validator fills in limit_value (NOTE_MAX_LENGTH) when the error is shown.
        error_messages={
            "max_length": ngettext_lazy(
                "Keep the note under %(limit_value)d character",
                "Keep the note under %(limit_value)d characters",
                "limit_value",
            )
        },
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
        self.fields["assignee"].names = staff_menu_names(staff)
        self.fields["assignee"].error_messages["invalid_choice"] = gettext(
            "Choose a member of staff from the list"
        )
        self.fields["status"].error_messages["invalid_choice"] = gettext(
            "Choose a status from the list"
        )

    def clean_due_date(self) -> date:
        due = self.cleaned_data["due_date"]
        opened = timezone.localdate(self.follow_up.created_at)
        if due < opened:
            raise forms.ValidationError(
                gettext("The due date cannot be before the item was opened (%(date)s)")
                % {"date": date_format(opened, "DATE_FORMAT")}
            )
        if due > timezone.localdate() + DUE_DATE_MAX_AHEAD:
            raise forms.ValidationError(gettext("The due date must be within a year from today"))
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
            raise forms.ValidationError(
                gettext("Nothing was changed: change a field or add a note")
            )
        return data
