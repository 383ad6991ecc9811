"""A name with no place to break (150 letters, as a form allows) never widens a page."""

import pytest

from tests.browsing import browser_sign_in
from tests.factories import complete_attempt, make_group, put_in_group

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE, LAPTOP = 360, 1280
LONG = "W" * 150  # the widest letter, the longest name the record holds


@pytest.fixture
def long_named(learner):
    """A learner whose names are 150 letters each, in a class of the same length of name."""
    learner.first_name = LONG
    learner.last_name = LONG
    learner.email = f"{'w' * 60}@{'x' * 60}.example"
    learner.save()
    learner.test_group = make_group(LONG[:100])  # a class name holds 100 letters
    put_in_group(learner.test_group, learner)
    complete_attempt(learner, {"Sleep": "No"}, signal=False)
    return learner


def page_width(browser, base_url: str, username: str, width: int, path: str) -> tuple[int, str]:
    """Open `path` in a window `width` px wide; return the document's width and its text."""
    context = browser.new_context(viewport={"width": width, "height": 800})
    try:
        page = context.new_page()
        browser_sign_in(page, base_url, username)
        response = page.goto(base_url + path)
        assert response.status == 200, path
        return page.evaluate("document.documentElement.scrollWidth"), page.inner_text("body")
    finally:
        context.close()


@pytest.mark.parametrize("width", [PHONE, LAPTOP])
def test_staff_pages_about_a_long_named_learner_fit_the_window(
    browser, live_server, staff, long_named, width
):
    attempt = long_named.attempts.get()
    for path in [
        f"/learners/{long_named.pk}/",
        f"/learners/{long_named.pk}/edit/",
        f"/learners/{long_named.pk}/attempts/{attempt.assessment_id}/",
        f"/learners/?q={LONG[:20]}",
        f"/classes/{long_named.test_group.pk}/",
    ]:
        scroll_width, text = page_width(browser, live_server.url, staff.username, width, path)
        assert LONG in text, path
        assert scroll_width <= width, f"{path} is {scroll_width} px wide in a {width} px window"


@pytest.mark.parametrize("width", [PHONE, LAPTOP])
def test_a_long_named_learners_own_page_fits_the_window(browser, live_server, long_named, width):
    scroll_width, text = page_width(browser, live_server.url, long_named.username, width, "/me/")

    assert LONG in text
    assert scroll_width <= width, f"/me/ is {scroll_width} px wide in a {width} px window"
