"""The board in Chromium: it counts pupils in as they sign in, by itself, asks seldom while
sign-in is closed and not at all once signed out; and it works by keyboard."""

import pytest

from accounts.models import StaffRole
from learners.models import Level
from lessons import board_views
from lessons.models import CardSession, SignInCard
from lessons.services import group_cards_print, window_close, window_open
from tests.browsing import browser_sign_in
from tests.factories import make_group, make_learner, make_staff, put_in_group

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def lesson():
    """Class 2C with two pupils and their cards, its sign-in open; return (group, teacher)."""
    group = make_group("2C", level=Level.PRIMARY)
    teacher = make_staff("tess.teacher", role=StaffRole.TEACHER, groups=[group])
    pupils = [make_learner("amy.pupil", "u-amy"), make_learner("ben.pupil", "u-ben")]
    put_in_group(group, *pupils)
    group_cards_print(group=group, learners=pupils, printed_by=teacher, address=None)
    window_open(group=group, minutes=45, opened_by=teacher, address=None)
    return group, teacher


def test_the_board_counts_pupils_in_by_itself_and_slows_when_sign_in_closes(
    browser, live_server, lesson
):
    group, teacher = lesson
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    browser_sign_in(page, live_server.url, teacher.username)
    page.goto(f"{live_server.url}/classes/{group.pk}/")
    with page.expect_navigation():
        page.click("text=Show on the board")
    assert page.locator(".board-count").inner_text() == "0 of 2 signed in"
    assert page.locator(".site-header").count() == 0

    amy = SignInCard.objects.get(learner__username="amy.pupil")
    CardSession.objects.create(
        card=amy, learner=amy.learner, window=group.sign_in_windows.get(), device="a laptop"
    )
    page.wait_for_selector(".board-count:text-is('1 of 2 signed in')", timeout=15_000)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    window_close(group=group, closed_by=teacher, address=None)
    page.wait_for_selector(
        "text=Sign-in is closed. Wait for your teacher to open it.", timeout=15_000
    )
    asked.clear()
    page.wait_for_timeout(7_000)

    assert asked == []
    assert page.locator(".board-count").count() == 0
    page.close()


def test_the_board_works_by_keyboard(browser, live_server, lesson, settings):
    settings.PORTAL_URL = "https://portal.school.example"
    group, teacher = lesson
    page = browser.new_page(viewport={"width": 360, "height": 640})
    browser_sign_in(page, live_server.url, teacher.username)
    page.goto(f"{live_server.url}/classes/{group.pk}/board/")
    assert page.locator(".board-address").inner_text() == "portal.school.example/card/"

    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Back to the class"
    with page.expect_navigation():
        page.keyboard.press("Enter")

    assert page.url.endswith(f"/classes/{group.pk}/#lesson")
    page.close()


def test_a_board_put_up_before_sign_in_opens_counts_once_it_opens(
    browser, live_server, monkeypatch
):
    # The closed board asks every 20 s in use; sooner here, so the test waits less.
    monkeypatch.setattr(board_views, "CLOSED_REFRESH_SECONDS", 2)
    group = make_group("2C", level=Level.PRIMARY)
    teacher = make_staff("tess.teacher", role=StaffRole.TEACHER, groups=[group])
    pupils = [make_learner("amy.pupil", "u-amy"), make_learner("ben.pupil", "u-ben")]
    put_in_group(group, *pupils)
    group_cards_print(group=group, learners=pupils, printed_by=teacher, address=None)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    browser_sign_in(page, live_server.url, teacher.username)
    page.goto(f"{live_server.url}/classes/{group.pk}/board/")
    assert "Sign-in is closed." in page.locator("#board-status").inner_text()
    polls: list[dict] = []
    page.on(
        "request",
        lambda request: polls.append(request.headers) if "/board/" in request.url else None,
    )

    window = window_open(group=group, minutes=45, opened_by=teacher, address=None)
    page.wait_for_selector(".board-count:text-is('0 of 2 signed in')", timeout=20_000)
    amy = SignInCard.objects.get(learner__username="amy.pupil")
    CardSession.objects.create(card=amy, learner=amy.learner, window=window, device="a laptop")
    page.wait_for_selector(".board-count:text-is('1 of 2 signed in')", timeout=20_000)

    assert "Scan your card or type your code" in page.locator("#board-status").inner_text()
    # Each of the script's own requests says it is not the teacher's doing.
    assert polls and all(headers.get("x-not-activity") == "1" for headers in polls)
    page.close()


def test_the_board_stops_and_says_to_refresh_once_signed_out(browser, live_server, lesson):
    group, teacher = lesson
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    browser_sign_in(page, live_server.url, teacher.username)
    page.goto(f"{live_server.url}/classes/{group.pk}/board/")
    assert page.locator("#board-stopped").is_hidden()

    page.context.clear_cookies()  # as when the projector's session ends
    page.wait_for_selector("#board-stopped:has-text('This board has stopped updating.')")
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.wait_for_timeout(7_000)

    assert page.locator("#board-stopped a").inner_text() == "Refresh"
    assert asked == []
    page.close()
