"""The class pages' other states pass axe at a phone's and a laptop's width.

A refused class, figures withheld at one level, a teacher's learner list, the board once it
has stopped, and the question before adding learners of another level (and going back from it).
"""

import pytest

from accounts.models import StaffRole
from learners.models import Level
from lessons.services import group_cards_print, window_open
from tests.browsing import browser_sign_in, violations
from tests.factories import (
    cohort_learner,
    completed,
    make_group,
    make_learner,
    make_staff,
    put_in_group,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = [360, 1280]


def assert_passes_axe(page, state: str, width: int) -> None:
    """No WCAG A/AA violation, and nothing wider than the screen."""
    problems = violations(page)
    assert not problems, f"{state} at {width}px ({page.url}):\n  " + "\n  ".join(problems)
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1, state


@pytest.mark.parametrize("width", WIDTHS)
def test_the_dashboard_refused_and_withheld_at_one_level_pass_axe(browser, live_server, width):
    secondary = [cohort_learner() for _ in range(6)]
    primary = [cohort_learner(level=Level.PRIMARY) for _ in range(2)]
    for learner in (*secondary, *primary):
        completed(learner, "2026-09-10", areas={"Sleep": "yes"})
    year_7 = make_group("Y7")
    put_in_group(year_7, *secondary, *primary)
    lead = make_staff("dee.lead")
    page = browser.new_page(viewport={"width": width, "height": 800})
    browser_sign_in(page, live_server.url, lead.username)

    page.goto(live_server.url + "/dashboard/?group=999999")
    assert page.locator(".error-summary").is_visible()
    assert_passes_axe(page, "dashboard, a class refused", width)

    page.goto(f"{live_server.url}/dashboard/?group={year_7.pk}&level={Level.SECONDARY}")
    assert "are not shown at one level" in page.inner_text("main")
    assert_passes_axe(page, "dashboard, other levels withheld", width)
    page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_a_teachers_learner_list_passes_axe(browser, live_server, width):
    class_7b, class_8c, class_9d = make_group("7B"), make_group("8C"), make_group("9D")
    pupils = [make_learner(f"pupil{n}.class", f"u-class{n}") for n in range(3)]
    put_in_group(class_7b, *pupils)
    put_in_group(class_8c, pupils[0])
    put_in_group(class_9d, pupils[0], pupils[1])
    teacher = make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[class_7b, class_9d])
    page = browser.new_page(viewport={"width": width, "height": 800})
    browser_sign_in(page, live_server.url, teacher.username)

    for path, state in (
        ("/learners/", "a teacher's learner list"),
        (f"/learners/?group={class_7b.pk}", "a teacher's learner list of their class"),
    ):
        page.goto(live_server.url + path)
        assert page.locator("main th:text-is('Class')").count() == 1, state
        assert page.locator("main td:has-text('7B')").count() >= 1, state
        assert_passes_axe(page, state, width)
    page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_board_once_stopped_passes_axe(browser, live_server, width):
    group = make_group("2C", level=Level.PRIMARY)
    teacher = make_staff("tess.teacher", role=StaffRole.TEACHER, groups=[group])
    pupils = [make_learner("amy.pupil", "u-amy"), make_learner("ben.pupil", "u-ben")]
    put_in_group(group, *pupils)
    group_cards_print(group=group, learners=pupils, printed_by=teacher, address=None)
    window_open(group=group, minutes=45, opened_by=teacher, address=None)
    page = browser.new_page(viewport={"width": width, "height": 800})
    browser_sign_in(page, live_server.url, teacher.username)
    page.goto(f"{live_server.url}/classes/{group.pk}/board/")

    page.context.clear_cookies()  # as when the projector's session ends: the next poll stops
    page.wait_for_selector("#board-stopped:has-text('This board has stopped updating.')")

    assert page.locator("#board-stopped").is_visible()
    assert_passes_axe(page, "the board, stopped", width)
    page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_adding_learners_of_mixed_levels_and_going_back_pass_axe(browser, live_server, width):
    class_3p = make_group("3P", level=Level.PRIMARY)
    pia = cohort_learner(name="pia.prim", level=Level.PRIMARY)
    sam = cohort_learner(name="sam.second", level=Level.SECONDARY)
    admin = make_staff("ada.admin", role=StaffRole.ADMIN)
    page = browser.new_page(viewport={"width": width, "height": 800})
    browser_sign_in(page, live_server.url, admin.username)
    page.goto(f"{live_server.url}/classes/{class_3p.pk}/?q=pupil")
    form = "main form[action$='/learners/']"
    for learner in (pia, sam):
        page.check(f"{form} input[name=learners][value='{learner.pk}']")
    with page.expect_navigation():
        page.click(f"{form} button[type=submit]")

    assert page.inner_text("h1") == "Add learners of another level to 3P?"
    assert page.locator("h2:text-is('Will be added to 3P')").is_visible()
    assert_passes_axe(page, "asked before adding another level", width)

    with page.expect_navigation():
        page.click("main a:text-is('Go back')")
    for learner in (pia, sam):
        assert page.is_checked(f"{form} input[name=learners][value='{learner.pk}']")
    assert_passes_axe(page, "the class page after going back", width)
    page.close()
