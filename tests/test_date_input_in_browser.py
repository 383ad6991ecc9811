"""In Chromium: a date of birth typed in three boxes registers a learner; no date pickers."""

from datetime import date

import pytest

from learners.models import Learner
from tests.browsing import browser_sign_in, fill_date
from tests.factories import VALID
from tests.page_tour import fill_portal, visit_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The tour's pages that ask for a date, each in the state the tour reaches.
PAGES_WITH_DATES = {
    "dashboard",
    "dashboard-filter-error",
    "dashboard-date-error",
    "register-errors",
    "register-date-error",
    "learner-edit",
    "learner-edit-errors",
    "followup-item",
    "teacher-dashboard",
}


def test_staff_register_a_learner_typing_the_date_of_birth_in_three_boxes(
    browser, live_server, staff, upstream
):
    page = browser.new_page()
    browser_sign_in(page, live_server.url, staff.username)
    page.goto(live_server.url + "/learners/new/")
    page.fill("#id_username", "nia.north")
    page.fill("#id_password", VALID["password"])
    dob = page.get_by_role("group", name="Date of birth")
    dob.get_by_label("Day").fill("27")
    dob.get_by_label("Month").fill("3")
    dob.get_by_label("Year").fill("2009")
    page.click("main button[type=submit]")
    page.wait_for_load_state()

    learner = Learner.objects.get(username="nia.north")
    assert page.url == f"{live_server.url}/learners/{learner.pk}/"
    assert "27 March 2009" in page.inner_text("main")
    assert upstream.state.learners[learner.upstream_user_id].dob == date(2009, 3, 27)
    page.close()


def test_an_error_summary_link_takes_focus_to_the_wrong_box(browser, live_server, staff):
    page = browser.new_page()
    browser_sign_in(page, live_server.url, staff.username)
    page.goto(live_server.url + "/learners/new/")
    fill_date(page, "dob", "27", "", "2009")
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    page.click(".error-summary a[href='#id_dob_month']")

    assert page.evaluate("document.activeElement.id") == "id_dob_month"
    assert page.input_value("#id_dob_day") == "27" and page.input_value("#id_dob_year") == "2009"
    page.close()


def test_no_page_of_the_tour_has_a_date_picker_and_every_date_is_three_boxes(
    browser, live_server, upstream, staff, learner, other_learner
):
    with_boxes = set()
    for user, stops in fill_portal(staff=staff, learner=learner, other_learner=other_learner):
        page = browser.new_page()
        for stop, shown in visit_as(page, live_server.url, user, stops):
            assert shown.locator("input[type=date]").count() == 0, stop.name
            if shown.locator("fieldset input[inputmode=numeric][name$=_day]").count():
                with_boxes.add(stop.name)
        page.close()
    assert with_boxes == PAGES_WITH_DATES
