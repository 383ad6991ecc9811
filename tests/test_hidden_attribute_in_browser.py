"""The hidden attribute hides, in Chromium: a class's display must not show a button that
cannot work (the board's "Full screen" without a script or without full-screen support)."""

import pytest

from accounts.models import StaffRole
from learners.models import Level
from tests.browsing import browser_sign_in
from tests.factories import make_group, make_staff

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def lesson():
    """Class 2C and its teacher; return (group, teacher)."""
    group = make_group("2C", level=Level.PRIMARY)
    return group, make_staff("tess.teacher", role=StaffRole.TEACHER, groups=[group])


@pytest.mark.parametrize("how", ["no script", "no full screen"])
def test_full_screen_is_offered_only_where_it_works(browser, live_server, lesson, how):
    group, teacher = lesson
    if how == "no script":
        context = browser.new_context(java_script_enabled=False)
    else:
        context = browser.new_context()
        context.add_init_script("delete Element.prototype.requestFullscreen;")
    page = context.new_page()
    browser_sign_in(page, live_server.url, teacher.username)
    page.goto(f"{live_server.url}/classes/{group.pk}/board/")

    assert page.locator(".board-address").is_visible()
    assert page.get_by_role("link", name="Refresh").first.is_visible()
    assert page.locator("[data-fullscreen]").is_hidden()
    context.close()


def test_full_screen_is_offered_where_it_works(browser, live_server, lesson):
    group, teacher = lesson
    page = browser.new_page()
    browser_sign_in(page, live_server.url, teacher.username)
    page.goto(f"{live_server.url}/classes/{group.pk}/board/")

    assert page.get_by_role("button", name="Full screen").is_visible()
    page.close()
