"""A date typed as day, month and year in three boxes (GOV.UK's date input), or sent whole.

Browsers' own date inputs show the order of the browser's language (mm/dd/yyyy in an English
browser in a British school), so a person types the three parts in boxes named
`<name>_day`, `<name>_month` and `<name>_year`. Scripts, checks and the bulk import send the
date whole as `<name>` (2009-03-27): the field still takes that, with the formats it took
before and their messages.
"""

import re
from datetime import date
from typing import NamedTuple

from django import forms
from django.core.exceptions import ValidationError
from django.forms.boundfield import BoundField
from django.template.loader import render_to_string
from django.utils.dates import MONTHS, MONTHS_3
from django.utils.translation import gettext_lazy, pgettext_lazy

PARTS = ("day", "month", "year")
PART_LABELS = {
    "day": pgettext_lazy("part of a date", "Day"),
    "month": pgettext_lazy("part of a date", "Month"),
    "year": pgettext_lazy("part of a date", "Year"),
}
# The longest text a part can hold: longer is a slip, and never handed to int().
PART_MAX_LENGTH = {"day": 2, "month": 2, "year": 4}
ISO_DATE = re.compile(r"\s*(\d{1,4})-(\d{1,2})-(\d{1,2})\s*")

# Translators: %(name)s is the date's name, e.g. "Date of birth must include a day".
MISSING = {
    ("day",): gettext_lazy("%(name)s must include a day"),
    ("month",): gettext_lazy("%(name)s must include a month"),
    ("year",): gettext_lazy("%(name)s must include a year"),
    ("day", "month"): gettext_lazy("%(name)s must include a day and month"),
    ("day", "year"): gettext_lazy("%(name)s must include a day and year"),
    ("month", "year"): gettext_lazy("%(name)s must include a month and year"),
}
# Translators: %(name)s is the date's name, e.g. "Date of birth must be a real date".
NOT_A_REAL_DATE = gettext_lazy("%(name)s must be a real date")
# Translators: %(name)s is the date's name, e.g. "Date of birth: the year must have 4 numbers".
YEAR_OF_FOUR = gettext_lazy("%(name)s: the year must have 4 numbers")


class DateParts(NamedTuple):
    """The three boxes as typed, kept as text so that a mistake is shown back as it was."""

    day: str
    month: str
    year: str


class DatePartsWidget(forms.Widget):
    """Three labelled text boxes for numbers: day, month and year."""

    template_name = "includes/date_parts.html"
    use_fieldset = True

    def __init__(self, attrs=None, *, autocomplete: str = ""):
        super().__init__(attrs)
        # "bday" on a date of birth: browsers offer bday-day, bday-month and bday-year.
        self.autocomplete = autocomplete

    def value_from_datadict(self, data, files, name: str) -> DateParts | str | None:
        if any(f"{name}_{part}" in data for part in PARTS):
            return DateParts(*(data.get(f"{name}_{part}", "") for part in PARTS))
        return data.get(name)

    def value_omitted_from_data(self, data, files, name: str) -> bool:
        return name not in data and not any(f"{name}_{part}" in data for part in PARTS)

    def id_for_label(self, id_: str) -> str:
        return f"{id_}_day" if id_ else ""

    def get_context(self, name: str, value, attrs) -> dict:
        attrs = dict(attrs or {})
        # Set by DatePartsBoundField: only the boxes that are wrong are marked invalid.
        wrong = attrs.pop("wrong_parts", ())
        attrs.pop("aria-invalid", None)
        context = super().get_context(name, value, attrs)
        base_id = context["widget"]["attrs"].pop("id", "")
        shown = typed_parts(value)
        context["widget"]["parts"] = [
            {
                "name": f"{name}_{part}",
                "id": f"{base_id}_{part}" if base_id else "",
                "label": PART_LABELS[part],
                "value": getattr(shown, part),
                "part": part,
                "invalid": part in wrong,
                "autocomplete": f"{self.autocomplete}-{part}" if self.autocomplete else "",
            }
            for part in PARTS
        ]
        return context

    def render(self, name: str, value, attrs=None, renderer=None) -> str:
        # The site's templates, beside includes/field.html, rather than the form renderer's;
        # what they render is already marked safe, with every value escaped.
        return render_to_string(self.template_name, self.get_context(name, value, attrs))


def typed_parts(value) -> DateParts:
    """Return a value (typed parts, a date, or a date sent whole) as the three boxes show it."""
    if isinstance(value, DateParts):
        return value
    if isinstance(value, date):
        return DateParts(str(value.day), str(value.month), str(value.year))
    if isinstance(value, str) and (match := ISO_DATE.fullmatch(value)):
        year, month, day = match.groups()
        return DateParts(day, month, year)
    return DateParts("", "", "")


class DatePartsBoundField(BoundField):
    """A date field on a page: knows which of its boxes are wrong, for the links and marks."""

    @property
    def wrong_parts(self) -> tuple[str, ...]:
        """Return the boxes the errors are about: all three unless an error names some."""
        named: set[str] = set()
        for error in self.errors.as_data():
            named.update((error.params or {}).get("parts", PARTS))
        return tuple(part for part in PARTS if part in named)

    @property
    def id_for_label(self) -> str:
        # The error summary links here: to the first box that is wrong.
        base_id = self.field.widget.attrs.get("id") or self.auto_id
        return f"{base_id}_{(self.wrong_parts or PARTS)[0]}" if base_id else ""

    def build_widget_attrs(self, attrs, widget=None) -> dict:
        attrs = super().build_widget_attrs(attrs, widget)
        if self.errors:
            attrs["wrong_parts"] = self.wrong_parts
        return attrs


class DatePartsField(forms.DateField):
    """A date from three boxes, or from one value in `input_formats` (the old single field).

    `name` is the date in the errors' sentences ("Date of birth must include a month"); the
    label by default. A value sent whole keeps the field's "invalid" message, which says the
    format expected.
    """

    widget = DatePartsWidget
    bound_field_class = DatePartsBoundField

    def __init__(self, *, name: str | None = None, **kwargs):
        super().__init__(**kwargs)
        self.date_name = name or self.label

    def to_python(self, value) -> date | None:
        if not isinstance(value, DateParts):
            return super().to_python(value)
        typed = DateParts(*(part.strip() for part in value))
        if not any(typed):
            return None
        missing = tuple(part for part in PARTS if not getattr(typed, part))
        if missing:
            raise self._error(MISSING[missing], "incomplete", missing)
        numbers = {part: _number(part, getattr(typed, part)) for part in PARTS}
        unreadable = tuple(part for part in PARTS if numbers[part] is None)
        if unreadable:
            raise self._error(NOT_A_REAL_DATE, "invalid_part", unreadable)
        out_of_range = tuple(
            part
            for part, highest in (("day", 31), ("month", 12))
            if not 1 <= numbers[part] <= highest
        )
        if out_of_range:
            raise self._error(NOT_A_REAL_DATE, "invalid_part", out_of_range)
        if len(typed.year) != 4:
            raise self._error(YEAR_OF_FOUR, "invalid_year", ("year",))
        try:
            return date(numbers["year"], numbers["month"], numbers["day"])
        except ValueError:  # 31 February: no one box is wrong, the date as a whole is
            raise self._error(NOT_A_REAL_DATE, "invalid", PARTS) from None

    def _error(self, message, code: str, parts: tuple[str, ...]) -> ValidationError:
        return ValidationError(message, code=code, params={"name": self.date_name, "parts": parts})


def _number(part: str, text: str) -> int | None:
    """Return a part's number (a month may be a name: "March", "mar"), or None."""
    if part == "month":
        folded = text.casefold()
        for number in MONTHS:
            if folded in (str(MONTHS[number]).casefold(), str(MONTHS_3[number]).casefold()):
                return number
    if text.isdecimal() and len(text) <= PART_MAX_LENGTH[part]:
        return int(text)
    return None
