"""The class page's sign-in box (issue 32: "the class page's 'Close sign-in now' and 'Keep
open' controls are misaligned and the box shows 60 minutes when 45 were chosen").
"""

import re

import pytest
from django.test import Client

from accounts.models import StaffRole
from learners.models import Level
from lessons.services import window_open
from tests.browsing import browser_sign_in
from tests.factories import make_group, make_staff


@pytest.fixture
def class_2c(db):
    return make_group("2C", level=Level.PRIMARY)


@pytest.fixture
def teacher(class_2c):
    return make_staff("tess.teacher", role=StaffRole.TEACHER, groups=[class_2c])


def bottom(page, selector: str) -> float:
    box = page.locator(selector).bounding_box()
    return box["y"] + box["height"]


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def minutes_box(page: str) -> list[str]:
    """Return the value of each minutes box on the class page."""
    return re.findall(r'<input[^>]*name="minutes"[^>]*value="(\d+)"', page)


def test_after_opening_for_45_minutes_the_box_offers_45(class_2c, teacher):
    client = client_of(teacher)
    opened = client.post(f"/classes/{class_2c.pk}/sign-in/open/", {"minutes": "45"}, follow=True)

    page = opened.content.decode()
    assert opened.status_code == 200 and "Card sign-in is open until" in page
    assert minutes_box(page) == ["45"]


def test_keeping_open_for_20_minutes_offers_20_and_a_closed_class_offers_the_last_choice(
    class_2c, teacher
):
    client = client_of(teacher)
    client.post(f"/classes/{class_2c.pk}/sign-in/open/", {"minutes": "45"})
    kept = client.post(f"/classes/{class_2c.pk}/sign-in/open/", {"minutes": "20"}, follow=True)
    assert minutes_box(kept.content.decode()) == ["20"]

    closed = client.post(f"/classes/{class_2c.pk}/sign-in/close/", follow=True)

    page = closed.content.decode()
    assert "Open sign-in" in page
    assert minutes_box(page) == ["20"]


def test_a_class_never_opened_offers_an_hour(class_2c, teacher):
    page = client_of(teacher).get(f"/classes/{class_2c.pk}/").content.decode()

    assert "Open sign-in" in page
    assert minutes_box(page) == ["60"]


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_close_and_keep_open_stand_on_one_line(browser, live_server):
    group = make_group("2C", level=Level.PRIMARY)
    teacher = make_staff("tess.teacher", role=StaffRole.TEACHER, groups=[group])
    window_open(group=group, minutes=45, opened_by=teacher, address=None)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    browser_sign_in(page, live_server.url, teacher.username)
    page.goto(f"{live_server.url}/classes/{group.pk}/")

    close = ".lesson-actions button.warning"
    keep = ".lesson-actions button.secondary"
    assert page.locator(close).inner_text() == "Close sign-in now"
    assert page.locator(keep).inner_text() == "Keep open for this long from now"
    assert page.input_value("#id_minutes") == "45"
    assert abs(bottom(page, close) - bottom(page, keep)) <= 1
    assert abs(bottom(page, close) - bottom(page, "#id_minutes")) <= 1
    page.close()


def test_the_minutes_to_open_for_and_open_sign_in_stand_together(browser, live_server):
    group = make_group("2C", level=Level.PRIMARY)
    teacher = make_staff("tess.teacher", role=StaffRole.TEACHER, groups=[group])
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    browser_sign_in(page, live_server.url, teacher.username)
    page.goto(f"{live_server.url}/classes/{group.pk}/")

    button = page.get_by_role("button", name="Open sign-in")
    assert button.is_visible()
    minutes = page.locator("#id_minutes").bounding_box()
    opens = button.bounding_box()
    # Beside the box it belongs to, not pushed to the far edge of the page.
    assert 0 <= opens["x"] - (minutes["x"] + minutes["width"]) <= 48
    assert abs(bottom(page, "#id_minutes") - (opens["y"] + opens["height"])) <= 1
    page.close()
