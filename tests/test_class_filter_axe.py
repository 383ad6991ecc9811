"""The pages with the class filter pass axe at a phone's and a laptop's width, keyboard first."""

import pytest

from accounts.models import StaffRole
from tests.browsing import browser_sign_in, violations
from tests.factories import (
    SLEEP,
    cohort_learner,
    completed,
    flagged,
    make_group,
    make_learner,
    make_staff,
    put_in_group,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [360, 1280])
def test_the_class_filter_pages_pass_axe(browser, live_server, width):
    class_7b, class_8c = make_group("7B"), make_group("8C")
    pupils = [make_learner(f"pupil{n}.class", f"u-class{n}") for n in range(3)]
    put_in_group(class_7b, *pupils)
    put_in_group(class_8c, pupils[0])
    flagged(pupils[0], SLEEP)
    for _ in range(6):
        learner = cohort_learner()
        put_in_group(class_8c, learner)
        completed(learner, "2026-09-10")
    lead = make_staff("dee.lead", groups=[class_8c])
    make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[class_7b])
    page = browser.new_page(viewport={"width": width, "height": 800})
    browser_sign_in(page, live_server.url, lead.username)

    for path, state in (
        (f"/learners/?group={class_7b.pk}", "learner list of a class"),
        ("/learners/?group=999999", "learner list, a class refused"),
        (f"/follow-ups/?group={class_7b.pk}", "follow-up queue of a class"),
        ("/follow-ups/?group=999999", "follow-up queue, a class refused"),
        ("/dashboard/", "dashboard by class"),
        (f"/dashboard/?group={class_8c.pk}", "dashboard of a class"),
    ):
        page.goto(live_server.url + path)
        assert page.locator("select[name=group]").count() == 1, state
        problems = violations(page)
        assert not problems, f"{state} at {width}px:\n  " + "\n  ".join(problems)
        # Nothing wider than the screen: the Class column scrolls inside its table.
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1, state

    # The menu is chosen, and the search run, from the keyboard.
    page.goto(live_server.url + "/learners/")
    page.select_option("select[name=group]", str(class_7b.pk))
    with page.expect_navigation():
        page.locator("form[role=search] button[type=submit]").press("Enter")
    assert f"group={class_7b.pk}" in page.url
    page.close()
