"""The edit page's error summary is the first thing under its heading, and has the focus."""

import re

import pytest

from tests.browsing import browser_sign_in

PHONE, LAPTOP = 360, 1280
NEAR_THE_TOP = 200  # px below the top of the main content: in view without scrolling


@pytest.mark.parametrize(
    ("page_path", "typed"),
    [("edit", {"email": "not an address"}), ("password", {"password": "x"})],
)
def test_the_error_summary_follows_the_heading_at_once(staff_client, learner, page_path, typed):
    response = staff_client.post(f"/learners/{learner.pk}/{page_path}/", typed)

    page = response.content.decode()
    assert response.status_code == 200
    assert "There is a problem" in page
    after_heading = page.split("</h1>", 1)[1].lstrip()
    assert re.match(r'<div class="error-summary" role="alert" tabindex="-1"', after_heading)


@pytest.fixture
def window(browser):
    """Open a browser window `width` px wide, closed after the test, pass or fail."""
    contexts = []

    def at(width: int):
        contexts.append(browser.new_context(viewport={"width": width, "height": 800}))
        return contexts[-1].new_page()

    yield at
    for context in contexts:
        context.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [PHONE, LAPTOP])
def test_the_error_summary_is_in_view_and_focused_after_saving(
    window, live_server, staff, learner, width
):
    page = window(width)
    browser_sign_in(page, live_server.url, staff.username)
    page.goto(f"{live_server.url}/learners/{learner.pk}/edit/")
    page.fill("#id_email", "not an address")
    page.get_by_role("button", name="Save the details").click()
    page.wait_for_load_state()

    summary = page.locator(".error-summary")
    assert summary.is_visible()
    assert "Enter a valid email address" in summary.inner_text()
    top = summary.bounding_box()["y"] - page.locator("main").bounding_box()["y"]
    assert top < NEAR_THE_TOP, f"the summary sits {top} px down the main content"
    assert page.evaluate("document.activeElement.classList.contains('error-summary')")
