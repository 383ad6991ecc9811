"""The dashboard's filters: level and a date range, checked and turned into CohortFilters."""

from datetime import date, datetime, time, timedelta

from django import forms
from django.utils import timezone

from dashboard.selectors import CohortFilters
from learners.models import Level

# Dates outside these years are typing slips, and would overflow the time-zone arithmetic.
EARLIEST = date(1900, 1, 1)
LATEST = date(2999, 12, 31)


def _date_field(label: str) -> forms.DateField:
    return forms.DateField(
        label=label,
        required=False,
        input_formats=["%Y-%m-%d"],
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        error_messages={"invalid": f"Enter the {label} date as a real date, like 2026-09-01."},
    )


class CohortFilterForm(forms.Form):
    """Level, and dates from and to (both included); the GET names are level, from, to."""

    level = forms.ChoiceField(choices=[("", "All levels"), *Level.choices], required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # "from" is a Python keyword, so these two cannot be declared as class attributes.
        self.fields["from"] = _date_field("From")
        self.fields["to"] = _date_field("To")
        self.fields["level"].error_messages["invalid_choice"] = (
            "Choose a level from the list: further education, secondary or primary."
        )

    def clean(self) -> dict:
        cleaned = super().clean()
        for name in ("from", "to"):
            day = cleaned.get(name)
            if day is not None and not EARLIEST <= day <= LATEST:
                self.add_error(name, f"Enter a {name.title()} date from the years 1900 to 2999.")
        start, end = cleaned.get("from"), cleaned.get("to")
        both_valid = not (self.has_error("from") or self.has_error("to"))
        if start and end and end < start and both_valid:
            self.add_error("to", "The To date must be the same as the From date or later.")
        return cleaned

    def cohort_filters(self) -> CohortFilters:
        """Return the filters in force: none at all while any of them is invalid."""
        if not self.is_bound or not self.is_valid():
            return CohortFilters()
        zone = timezone.get_current_timezone()
        start, end = self.cleaned_data["from"], self.cleaned_data["to"]
        return CohortFilters(
            level=self.cleaned_data["level"],
            start=datetime.combine(start, time.min, tzinfo=zone) if start else None,
            # "to" includes the whole of that day: the window ends at the next midnight.
            end=datetime.combine(end + timedelta(days=1), time.min, tzinfo=zone) if end else None,
        )

    def describe(self) -> str:
        """Return the filters in force in words, e.g. "Secondary, from 1 September 2026"."""
        if self.cohort_filters() == CohortFilters():
            return "all learners at every date"
        level, start, end = (self.cleaned_data[name] for name in ("level", "from", "to"))
        words = [Level(level).label if level else "all levels"]
        if start:
            words.append(f"from {start.day} {start:%B %Y}")
        if end:
            words.append(f"to {end.day} {end:%B %Y}")
        return ", ".join(words)

    def filter_detail(self) -> dict[str, str]:
        """Return the filters in force as text, for the audit trail and the export link."""
        filters = self.cohort_filters()
        if filters == CohortFilters():
            return {}
        return {
            "level": self.cleaned_data["level"],
            "from": _iso(self.cleaned_data["from"]),
            "to": _iso(self.cleaned_data["to"]),
        }


def _iso(day: date | None) -> str:
    return day.isoformat() if day else ""
