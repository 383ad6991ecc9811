"""Dates are typed as day, month and year in three boxes; a date sent whole is still taken.

The same in a browser: tests/test_date_input_in_browser.py.
"""

import re
from datetime import date, timedelta

import pytest
from django import forms
from django.template.loader import render_to_string
from django.utils import timezone

from kit.date_fields import DatePartsField
from learners.forms import LearnerRegistrationForm
from learners.models import Learner
from tests.factories import SLEEP, VALID, flagged

REGISTRATION = {name: value for name, value in VALID.items() if name != "dob"}


def typed(name: str, day: object, month: object, year: object) -> dict[str, str]:
    """Return the three boxes of a date as a browser posts them."""
    return {f"{name}_day": str(day), f"{name}_month": str(month), f"{name}_year": str(year)}


def box(html: str, name: str) -> str:
    """Return the <input> tag of one box of a date."""
    return re.search(rf'<input [^>]*name="{name}"[^>]*>', html).group(0)


def summary_links(html: str) -> list[str]:
    """Return the ids the error summary's links lead to."""
    start = html.index('class="error-summary"')
    summary = html[start : html.index("</ul>", start)]
    return re.findall(r'href="#([^"]+)"', summary)


def assert_links_lead_to_boxes(html: str, *ids: str) -> None:
    links = summary_links(html)
    for target in ids:
        assert target in links, links
        assert html.count(f'id="{target}"') == 1 and '<input type="text"' in box(html, target[3:])


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


def test_the_registration_form_offers_its_date_of_birth_field_to_other_forms():
    class EditDetails(forms.Form):
        dob = LearnerRegistrationForm.base_fields["dob"]

    too_young = date.today() - timedelta(days=50)
    form = EditDetails(typed("dob", too_young.day, too_young.month, too_young.year))
    assert "would be under 4 years old" in form.errors["dob"][0]
    assert 'name="dob_month"' in str(form["dob"])


# The registration page ----------------------------------------------------------------------


def test_a_learner_is_registered_with_the_date_of_birth_typed_in_three_boxes(
    staff_client, upstream
):
    response = staff_client.post("/learners/new/", {**REGISTRATION, **typed("dob", 27, 3, 2009)})

    learner = Learner.objects.get(username="nina.new")
    assert response.url == f"/learners/{learner.pk}/"
    assert learner.dob == date(2009, 3, 27)
    assert upstream.state.learners[learner.upstream_user_id].dob == date(2009, 3, 27)


def test_a_date_of_birth_sent_whole_still_registers_the_learner(staff_client, upstream):
    staff_client.post("/learners/new/", {**REGISTRATION, "dob": "2009-03-27"})

    assert Learner.objects.get(username="nina.new").dob == date(2009, 3, 27)


def test_the_registration_page_has_three_labelled_number_boxes_for_the_date_of_birth(
    staff_client,
):
    html = staff_client.get("/learners/new/").content.decode()

    assert 'type="date"' not in html
    assert '<fieldset class="field-group" aria-describedby="id_dob_helptext">' in html
    assert "For example, 27 3 2009" in html and "year-month-day" not in html
    for part, width in [("day", "day"), ("month", "month"), ("year", "year")]:
        tag = box(html, f"dob_{part}")
        assert f'id="id_dob_{part}"' in tag and 'inputmode="numeric"' in tag
        # Staff type the learner's date, not their own: no browser offers of a birthday.
        assert 'autocomplete="off"' in tag and "bday" not in tag
        assert f'class="date-input-{width}"' in tag
        assert "style=" not in tag


def test_a_missing_month_is_named_linked_and_marked_and_what_was_typed_stays(staff_client):
    response = staff_client.post(
        "/learners/new/", {**REGISTRATION, **typed("dob", "27", "", "2009")}
    )

    html = response.content.decode()
    assert "Date of birth must include a month" in html
    assert_links_lead_to_boxes(html, "id_dob_month")
    assert 'aria-invalid="true"' in box(html, "dob_month")
    assert "aria-invalid" not in box(html, "dob_day") + box(html, "dob_year")
    assert 'value="27"' in box(html, "dob_day") and 'value="2009"' in box(html, "dob_year")
    assert 'aria-describedby="id_dob_helptext id_dob_error"' in html
    assert '<div class="error-message" id="id_dob_error">' in html
    assert not Learner.objects.exists()


def test_31_february_is_not_a_real_date_and_every_box_is_marked(staff_client):
    response = staff_client.post(
        "/learners/new/", {**REGISTRATION, **typed("dob", "31", "02", "2009")}
    )

    html = response.content.decode()
    assert "Date of birth must be a real date" in html
    assert_links_lead_to_boxes(html, "id_dob_day")
    for part, shown in [("day", "31"), ("month", "02"), ("year", "2009")]:
        tag = box(html, f"dob_{part}")
        assert 'aria-invalid="true"' in tag and f'value="{shown}"' in tag


def test_the_age_rules_hold_for_a_date_typed_in_boxes(staff_client):
    tomorrow = date.today() + timedelta(days=1)
    future = typed("dob", tomorrow.day, tomorrow.month, tomorrow.year)
    old = typed("dob", 1, 1, 1850)

    for boxes, message in [(future, "must be in the past"), (old, "over 100 years old")]:
        html = staff_client.post("/learners/new/", {**REGISTRATION, **boxes}).content.decode()
        assert message in html
        assert_links_lead_to_boxes(html, "id_dob_day")


def test_what_was_typed_comes_back_escaped(staff_client):
    response = staff_client.post(
        "/learners/new/", {**REGISTRATION, **typed("dob", '"><b>1', "3", "2009")}
    )

    assert 'value="&quot;&gt;&lt;b&gt;1"' in box(response.content.decode(), "dob_day")


# The follow-up's due date and the dashboard's dates ---------------------------------------


def test_a_due_date_is_typed_in_three_boxes(staff_client, learner):
    item = flagged(learner, SLEEP)
    due = item.due_date + timedelta(days=3)

    page = staff_client.get(f"/follow-ups/{item.pk}/").content.decode()
    day = item.due_date
    assert f'value="{day.day}"' in box(page, "due_date_day") and 'type="date"' not in page
    assert "For example, 27 3 2026" in page
    staff_client.post(
        f"/follow-ups/{item.pk}/",
        {"status": "contacted", **typed("due_date", due.day, due.month, due.year)},
    )

    item.refresh_from_db()
    assert item.due_date == due


def test_a_due_date_missing_its_year_is_explained(staff_client, learner):
    item = flagged(learner, SLEEP)

    response = staff_client.post(
        f"/follow-ups/{item.pk}/", {"status": "contacted", **typed("due_date", "3", "4", "")}
    )

    html = response.content.decode()
    assert "Due date must include a year" in html
    assert_links_lead_to_boxes(html, "id_due_date_year")


def test_a_due_date_before_the_item_opened_names_that_day_in_words(staff_client, learner):
    item = flagged(learner, SLEEP)

    response = staff_client.post(
        f"/follow-ups/{item.pk}/", {"status": "contacted", **typed("due_date", 1, 1, 2001)}
    )

    html = response.content.decode()
    opened = timezone.localdate(item.created_at)
    assert f"({opened.day} {opened:%B %Y})" in html and f"({opened.isoformat()})" not in html


def test_the_dashboard_filters_by_dates_typed_in_boxes(staff_client):
    query = {**typed("from", 1, 9, 2026), **typed("to", "", "", "")}
    html = staff_client.get("/dashboard/", query).content.decode()

    assert "Showing all levels, from 1 September 2026." in html
    assert 'value="9"' in box(html, "from_month") and 'type="date"' not in html
    # The export link writes the date whole, which the export still takes.
    assert 'href="/learners/results.csv?level=&amp;from=2026-09-01&amp;to="' in html


def test_a_dashboard_date_with_a_wrong_month_is_explained_and_kept(staff_client):
    html = staff_client.get("/dashboard/", typed("to", "30", "14", "2026")).content.decode()

    assert "The To date must be a real date" in html
    assert_links_lead_to_boxes(html, "id_to_month")
    assert 'value="14"' in box(html, "to_month") and 'value="30"' in box(html, "to_day")
