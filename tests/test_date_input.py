"""Dates are typed as day, month and year in three boxes; a date sent whole is still taken."""

import re
from datetime import date

import pytest
from django import forms
from django.template.loader import render_to_string

from portal.date_fields import DatePartsField


def typed(name: str, day: object, month: object, year: object) -> dict[str, str]:
    """Return the three boxes of a date as a browser posts them."""
    return {f"{name}_day": str(day), f"{name}_month": str(month), f"{name}_year": str(year)}


class OneDate(forms.Form):
    when = DatePartsField(label="When", input_formats=["%Y-%m-%d"], required=False)


@pytest.mark.parametrize(
    ("boxes", "expected"),
    [
        (("27", "3", "2009"), date(2009, 3, 27)),
        ((" 07 ", "03", " 2009"), date(2009, 3, 7)),
        (("27", "March", "2009"), date(2009, 3, 27)),
        (("27", "mar", "2009"), date(2009, 3, 27)),
        (("29", "2", "2024"), date(2024, 2, 29)),
        (("", "", ""), None),
    ],
)
def test_the_three_boxes_make_a_date(boxes, expected):
    form = OneDate(typed("when", *boxes))
    assert form.is_valid(), form.errors
    assert form.cleaned_data["when"] == expected


@pytest.mark.parametrize(
    ("boxes", "message", "wrong"),
    [
        (("27", "", "2009"), "When must include a month", ("month",)),
        (("", "3", "2009"), "When must include a day", ("day",)),
        (("", "", "2009"), "When must include a day and month", ("day", "month")),
        (("27", "", ""), "When must include a month and year", ("month", "year")),
        (("31", "2", "2009"), "When must be a real date", ("day", "month", "year")),
        (("27", "13", "2009"), "When must be a real date", ("month",)),
        (("0", "3", "2009"), "When must be a real date", ("day",)),
        (("2x", "3", "2009"), "When must be a real date", ("day",)),
        (("27", "3", "9" * 5000), "When must be a real date", ("year",)),
        (("27", "3", "09"), "When: the year must have 4 numbers", ("year",)),
    ],
)
def test_a_date_that_is_not_whole_or_not_real_says_which_box_is_wrong(boxes, message, wrong):
    form = OneDate(typed("when", *boxes))
    assert form.errors["when"] == [message]
    assert form["when"].wrong_parts == wrong
    assert form["when"].id_for_label == f"id_when_{wrong[0]}"


def test_a_date_sent_whole_is_still_taken():
    form = OneDate({"when": "2009-03-27"})
    assert form.is_valid() and form.cleaned_data["when"] == date(2009, 3, 27)
    assert not OneDate({"when": "27/03/2009"}).is_valid()


def test_the_boxes_win_over_a_date_sent_whole():
    form = OneDate({"when": "2001-01-01", **typed("when", "27", "3", "2009")})
    assert form.is_valid() and form.cleaned_data["when"] == date(2009, 3, 27)


def test_the_field_shows_three_labelled_boxes_under_a_legend_and_marks_the_wrong_one():
    field = OneDate(typed("when", "27", "", "2009"))["when"]

    html = render_to_string("includes/field.html", {"field": field})

    assert "<legend>When</legend>" in html and 'type="date"' not in html
    assert html.count('inputmode="numeric"') == 3
    for part, label in [("day", "Day"), ("month", "Month"), ("year", "Year")]:
        assert f'<label for="id_when_{part}">{label}</label>' in html
    assert re.findall(r'<input [^>]*name="(\w+)"[^>]*aria-invalid="true"', html) == ["when_month"]
    assert 'value="27"' in html and 'value="2009"' in html
