"""The dashboard's filters: level and a date range, checked and turned into CohortFilters."""

from datetime import date, datetime, time, timedelta

from django import forms
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext, gettext_lazy

from classes.filters import GROUP_PARAM, add_group_filter
from dashboard.selectors import CohortFilters
from kit.date_fields import DatePartsField
from learners.models import Level

# Dates outside these years are typing slips, and would overflow the time-zone arithmetic.
EARLIEST = date(1900, 1, 1)
LATEST = date(2999, 12, 31)


def _date_field(label: str, name: str, invalid: str) -> DatePartsField:
    return DatePartsField(
        label=label,
        name=name,
        required=False,
        # Sent whole, as links and the results export write it: an ISO date.
        input_formats=["%Y-%m-%d"],
        help_text=gettext("For example, 1 9 2026"),
        error_messages={"invalid": invalid},
    )


class CohortFilterForm(forms.Form):
    """Level, class, and dates from and to (both included); GET names level, group, from, to.

    Each date comes as its three boxes (`from_day`, `from_month`, `from_year`) or whole
    (`from=2026-09-01`, as the export link and older bookmarks write it).
    """

    level = forms.ChoiceField(
        label=gettext_lazy("Level"),
        choices=[("", gettext_lazy("All levels")), *Level.choices],
        required=False,
    )

    def __init__(self, *args, user: AbstractBaseUser, **kwargs):
        super().__init__(*args, **kwargs)
        add_group_filter(self, user)
        # "from" is a Python keyword, so these two cannot be declared as class attributes.
        self.fields["from"] = _date_field(
            gettext("From"),
            gettext("The From date"),
            gettext("Enter the From date as a real date, like 2026-09-01."),
        )
        self.fields["to"] = _date_field(
            gettext("To"),
            gettext("The To date"),
            gettext("Enter the To date as a real date, like 2026-09-01."),
        )
        self.fields["level"].error_messages["invalid_choice"] = gettext(
            "Choose a level from the list: further education, secondary or primary."
        )

    def clean(self) -> dict:
        cleaned = super().clean()
        out_of_range = {
            "from": gettext("Enter a From date from the years 1900 to 2999."),
            "to": gettext("Enter a To date from the years 1900 to 2999."),
        }
        for name in ("from", "to"):
            day = cleaned.get(name)
            if day is not None and not EARLIEST <= day <= LATEST:
                self.add_error(name, out_of_range[name])
        start, end = cleaned.get("from"), cleaned.get("to")
        both_valid = not (self.has_error("from") or self.has_error("to"))
        if start and end and end < start and both_valid:
            self.add_error("to", gettext("The To date must be the same as the From date or later."))
        return cleaned

    def cohort_filters(self) -> CohortFilters:
        """Return the filters in force: none at all while any of them is invalid."""
        if not self.is_bound or not self.is_valid():
            return CohortFilters()
        zone = timezone.get_current_timezone()
        start, end = self.cleaned_data["from"], self.cleaned_data["to"]
        return CohortFilters(
            level=self.cleaned_data["level"],
            group=self.cleaned_data.get(GROUP_PARAM),
            start=datetime.combine(start, time.min, tzinfo=zone) if start else None,
            # "to" includes the whole of that day: the window ends at the next midnight.
            end=datetime.combine(end + timedelta(days=1), time.min, tzinfo=zone) if end else None,
        )

    def describe(self) -> str:
        """Return the filters in force in words, e.g. "Secondary, from 1 September 2026"."""
        if self.cohort_filters() == CohortFilters():
            return gettext("all learners at every date")
        level, start, end = (self.cleaned_data[name] for name in ("level", "from", "to"))
        group = self.cleaned_data.get(GROUP_PARAM)
        level_words = Level(level).label if level else gettext("all levels")
        if group is not None:
            # Translators: the filters in force, e.g. "7B (2026/27), all levels".
            level_words = gettext("%(group)s, %(level)s") % {
                "group": str(group),
                "level": level_words,
            }
        words = {
            "level": level_words,
            "start": date_format(start, "DATE_FORMAT") if start else "",
            "end": date_format(end, "DATE_FORMAT") if end else "",
        }
        if start and end:
            # Translators: the filters in force, after "Showing"; level is a learner level or
            # "all levels", start and end are dates.
            return gettext("%(level)s, from %(start)s, to %(end)s") % words
        if start:
            # Translators: the filters in force, after "Showing".
            return gettext("%(level)s, from %(start)s") % words
        if end:
            # Translators: the filters in force, after "Showing".
            return gettext("%(level)s, to %(end)s") % words
        return str(words["level"])

    def filter_detail(self) -> dict[str, str]:
        """Return the filters in force as text, for the audit trail and the export link."""
        filters = self.cohort_filters()
        if filters == CohortFilters():
            return {}
        detail = {
            "level": self.cleaned_data["level"],
            "from": _iso(self.cleaned_data["from"]),
            "to": _iso(self.cleaned_data["to"]),
        }
        group = self.cleaned_data.get(GROUP_PARAM)
        if group is not None:
            detail[GROUP_PARAM] = str(group.pk)
        return detail


def _iso(day: date | None) -> str:
    return day.isoformat() if day else ""
