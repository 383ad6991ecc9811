"""The class filter, the class page, its board and adding learners, with the keyboard alone.

Tab, Shift+Tab, Enter, Space and the arrows (and typing into a focused box): no clicks and no
filling. Every focus move must show, on screen (tests/keyboard_support.py).
"""

from urllib.parse import parse_qs, urlsplit

import pytest

from accounts.models import StaffRole
from classes.models import GroupMembership
from learners.models import Level
from lessons.models import SignInWindow
from lessons.services import group_cards_print
from tests.factories import (
    PASSWORD,
    SLEEP,
    cohort_learner,
    completed,
    flagged,
    make_group,
    make_staff,
    put_in_group,
)
from tests.keyboard_support import (
    choose_option,
    focus_is,
    press,
    press_and_load,
    settled,
    sign_in_with_keyboard,
    tab_to_next,
    tab_until,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def signed_in_page(browser, live_server, viewport, username: str):
    page = browser.new_page(viewport=viewport)
    page.goto(live_server.url + "/accounts/login/")
    settled(page)
    sign_in_with_keyboard(page, username, PASSWORD)
    return page


def visit(page, url: str) -> None:
    page.goto(url)
    settled(page)


def query(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def open_until(group):
    """Return when the class's open sign-in closes."""
    return SignInWindow.objects.filter(group=group, closed_at__isnull=True).get().closes_at


def test_a_lead_filters_by_class_and_follows_a_class_with_the_keyboard_alone(
    browser, live_server, db, viewport
):
    class_7b, class_8c = make_group("7B"), make_group("8C")
    pupils = [cohort_learner() for _ in range(6)]
    for learner in pupils:
        completed(learner, "2026-09-10")
    put_in_group(class_7b, *pupils[:3])
    put_in_group(class_8c, *pupils[3:])
    flagged(pupils[0], SLEEP)
    flagged(pupils[3], SLEEP)
    lead = make_staff("dee.lead")
    page = signed_in_page(browser, live_server, viewport, lead.username)
    wanted = str(class_8c.pk)

    for path, button, shown in (
        ("/learners/", "main form[role=search] button[type=submit]", pupils[3].username),
        ("/follow-ups/", "main form[role=search] button[type=submit]", pupils[3].display_name),
        ("/dashboard/", "main form.dashboard-filters button[type=submit]", "8C"),
    ):
        where = f"{path}, the class filter"
        visit(page, live_server.url + path)
        tab_until(page, "main select[name=group]", where)
        choose_option(page, "main select[name=group]", wanted, where)
        tab_until(page, button, where)
        press_and_load(page)

        assert query(page).get("group") == [wanted], f"{where}: {page.url}"
        main = page.inner_text("main")
        assert shown in main, where
        if path != "/dashboard/":
            assert pupils[0].display_name not in main, where

    where = "dashboard, By class"
    visit(page, live_server.url + "/dashboard/")
    link = tab_until(page, "main a.group-link", where, limit=80)
    assert link["text"].startswith("7B"), link
    press_and_load(page)

    assert query(page).get("group") == [str(class_7b.pk)]
    assert "Showing 7B" in page.inner_text(".filter-status")
    page.close()


def test_a_teacher_runs_sign_in_and_the_board_with_the_keyboard_alone(
    browser, live_server, db, viewport
):
    group = make_group("2C", level=Level.PRIMARY)
    teacher = make_staff("tess.teacher", role=StaffRole.TEACHER, groups=[group])
    pupil = cohort_learner(name="amy.pupil", level=Level.PRIMARY)
    put_in_group(group, pupil)
    group_cards_print(group=group, learners=[pupil], printed_by=teacher, address=None)
    page = signed_in_page(browser, live_server, viewport, teacher.username)
    class_url = f"{live_server.url}/classes/{group.pk}/"

    where = "class page, Show on the board"
    visit(page, class_url)
    tab_until(page, f"#lesson a[href='/classes/{group.pk}/board/']", where, limit=80)
    press_and_load(page)
    assert urlsplit(page.url).path == f"/classes/{group.pk}/board/"
    assert "Sign-in is closed." in page.inner_text("#board-status")

    where = "board"
    press(page, "Tab", where)
    refresh = tab_to_next(page, "nav a[href$='/board/']", where)
    assert refresh["text"] == "Refresh", refresh
    press_and_load(page)
    assert urlsplit(page.url).path == f"/classes/{group.pk}/board/"
    press(page, "Tab", "board, refreshed")
    assert focus_is(page, "nav a[href$='#lesson']")
    press_and_load(page)
    assert page.url == class_url + "#lesson"

    where = "class page, sign-in closed"
    visit(page, class_url)
    tab_until(page, "#lesson input[name=minutes]", where, limit=80)
    page.keyboard.press("Control+A")
    page.keyboard.type("20")
    tab_to_next(page, "#lesson form[action$='/sign-in/open/'] button", where)
    press_and_load(page)
    opened_until = open_until(group)
    assert "Card sign-in is open until" in page.inner_text("#lesson")

    where = "class page, sign-in open"
    visit(page, class_url)
    tab_until(page, "#lesson input[name=minutes]", where, limit=80)
    page.keyboard.press("Control+A")
    page.keyboard.type("60")
    keep = tab_to_next(page, "#lesson form[action$='/sign-in/open/'] button", where)
    assert keep["text"] == "Keep open for this long from now", keep
    # Back and forth: Shift+Tab returns to the box the minutes were typed in.
    press(page, "Shift+Tab", where)
    assert focus_is(page, "#lesson input[name=minutes]"), where
    press(page, "Tab", where)
    press_and_load(page)
    assert open_until(group) > opened_until
    assert "Card sign-in is open until" in page.inner_text("#lesson")

    where = "class page, closing sign-in"
    visit(page, class_url)
    close = tab_until(page, "#lesson form[action$='/sign-in/close/'] button", where, limit=80)
    assert close["text"] == "Close sign-in now", close
    press_and_load(page)

    assert "Card sign-in is closed" in page.inner_text("#lesson")
    assert not SignInWindow.objects.filter(group=group, closed_at__isnull=True).exists()
    page.close()


def test_an_admin_unticks_goes_back_and_adds_another_level_with_the_keyboard_alone(
    browser, live_server, db, viewport
):
    class_3p = make_group("3P", level=Level.PRIMARY)
    pia = cohort_learner(name="pia.prim", level=Level.PRIMARY)
    sam = cohort_learner(name="sam.second", level=Level.SECONDARY)
    sol = cohort_learner(name="sol.second", level=Level.SECONDARY)
    admin = make_staff("ada.admin", role=StaffRole.ADMIN)
    page = signed_in_page(browser, live_server, viewport, admin.username)
    visit(page, f"{live_server.url}/classes/{class_3p.pk}/")
    form = "main form[action$='/learners/']"

    where = "class page, finding learners"
    tab_until(page, "#learner-search", where)
    page.keyboard.type("pupil")
    press_and_load(page)
    for learner in (pia, sam, sol):
        tab_until(page, f"{form} input[name=learners][value='{learner.pk}']", where)
        page.keyboard.press("Space")
    tab_until(page, f"{form} button[type=submit]", where)
    press_and_load(page)

    where = "asked about another level"
    assert page.inner_text("h1") == "Add learners of another level to 3P?"
    tab_until(page, f"#held-{sol.pk}", where)
    page.keyboard.press("Space")
    assert not page.is_checked(f"#held-{sol.pk}")
    back = tab_until(page, "main form .filters-actions a", where)
    assert back["text"] == "Go back", back
    press_and_load(page)

    where = "class page after going back"
    assert urlsplit(page.url).path == f"/classes/{class_3p.pk}/"
    for learner in (pia, sam, sol):
        assert page.is_checked(f"{form} input[name=learners][value='{learner.pk}']"), learner
    assert not GroupMembership.objects.filter(group=class_3p).exists()
    tab_until(page, f"{form} button[type=submit]", where, limit=80)
    press_and_load(page)

    where = "asked again"
    tab_until(page, f"#held-{sol.pk}", where)
    page.keyboard.press("Space")
    add = tab_until(page, "main form button[type=submit]", where)
    assert add["text"] == "Add to 3P", add
    press_and_load(page)

    joined = GroupMembership.objects.filter(group=class_3p).values_list("learner", flat=True)
    assert set(joined) == {pia.pk, sam.pk}
    assert "2 learners added to 3P." in page.inner_text(".messages")
    page.close()
