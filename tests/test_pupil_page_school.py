"""A pupil's pages before and around signing in are headed by their school (issue 31, part 5).

The card page, a refused card, a card's ended session and the sign-in page after an idle
sign-out name the school while the partner has only one; once a card is recognised the page
names the pupil's own school. With several schools a page no one is signed in to keeps
"Partner portal": it cannot know whose it is.
"""

import re
import time

import pytest
from django.test import Client

from accounts.idle import LAST_ACTIVITY_SESSION_KEY
from accounts.models import StaffRole
from learners.models import Level
from lessons.services import group_cards_print, window_open
from schools.models import School
from tests.factories import make_group, make_learner, make_staff, put_in_group

SCHOOL = "Hazel Grove School"
OTHER = "Rowan Bank Academy"
UNKNOWN_CODE = "ZZZZZ-ZZZZZ"  # a card code's length, on no card


@pytest.fixture
def only_school(db) -> School:
    school = School.default()
    school.name = SCHOOL
    school.save()
    return school


@pytest.fixture
def amys_card(only_school):
    """Amy's card, in a lesson open now."""
    group = make_group("2C", level=Level.PRIMARY)
    teacher = make_staff("tess.teacher", role=StaffRole.TEACHER, groups=[group])
    amy = make_learner("amy.pupil", "u-amy")
    amy.level = Level.PRIMARY
    amy.save()
    put_in_group(group, amy)
    (card,) = group_cards_print(
        group=group, learners=[amy], printed_by=teacher, address="127.0.0.1"
    )
    window_open(group=group, minutes=30, opened_by=teacher, address="127.0.0.1")
    return card


def heading_of(response) -> tuple[str, str]:
    """Return the page's title and the site name in its header."""
    html = response.content.decode()
    title = re.search(r"<title>(.*?)</title>", html, re.S)
    site = re.search(r'<a class="site-name"[^>]*>(.*?)</a>', html, re.S)
    assert title and site, html[:2000]
    return " ".join(title.group(1).split()), site.group(1).strip()


def assert_headed_by(response, name: str) -> None:
    title, site = heading_of(response)
    assert site == name and title.endswith(f"– {name}"), (title, site)


def test_is_this_you_names_the_pupils_school(amys_card):
    response = Client().post("/card/", {"secret": amys_card.secret})

    assert response.status_code == 200 and "<h1>Is this you?</h1>" in response.content.decode()
    assert_headed_by(response, SCHOOL)


def test_the_card_pages_no_one_is_signed_in_to_name_the_only_school(amys_card):
    client = Client()

    assert_headed_by(client.get("/card/"), SCHOOL)
    assert_headed_by(client.get("/card/?ended=1"), SCHOOL)
    refused = client.post("/card/", {"code": UNKNOWN_CODE})
    assert refused.status_code == 403 and "teacher" in refused.content.decode()
    assert_headed_by(refused, SCHOOL)


def test_the_sign_in_page_after_an_idle_sign_out_names_the_only_school(amys_card, settings):
    client = Client()
    client.force_login(amys_card.learner.user)
    session = client.session
    session[LAST_ACTIVITY_SESSION_KEY] = int(time.time()) - settings.LEARNER_IDLE_TIMEOUT - 5
    session.save()

    response = client.get("/me/", follow=True)

    assert "without activity" in response.content.decode()
    assert_headed_by(response, SCHOOL)


def test_with_several_schools_only_a_known_pupils_page_names_a_school(amys_card):
    School.objects.create(code="rowan", name=OTHER)
    client = Client()

    assert_headed_by(client.get("/card/"), "Partner portal")
    refused = client.post("/card/", {"code": UNKNOWN_CODE})
    assert refused.status_code == 403
    assert_headed_by(refused, "Partner portal")
    assert_headed_by(client.post("/card/", {"secret": amys_card.secret}), SCHOOL)
