"""Lesson sign-in that explains itself: the address on cards and the class page, the board."""

import time
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from accounts.idle import LAST_ACTIVITY_SESSION_KEY
from accounts.models import StaffRole
from learners.models import Level
from lessons.models import CardSession, SignInCard
from lessons.services import group_cards_print, window_close, window_open
from tests.factories import make_group, make_learner, make_staff, put_in_group

# The address pupils type: PORTAL_URL without its scheme, whatever host a request came by.
ADDRESS = "portal.school.example/card/"


@pytest.fixture(autouse=True)
def portal_url(settings):
    settings.PORTAL_URL = "https://portal.school.example"


@pytest.fixture
def class_2c(db):
    return make_group("2C", level=Level.PRIMARY)


@pytest.fixture
def teacher(class_2c):
    return make_staff("tess.teacher", role=StaffRole.TEACHER, groups=[class_2c])


@pytest.fixture
def pupils(class_2c):
    amy, ben = make_learner("amy.pupil", "u-amy"), make_learner("ben.pupil", "u-ben")
    put_in_group(class_2c, amy, ben)
    return amy, ben


@pytest.fixture
def cards(class_2c, teacher, pupils):
    return group_cards_print(
        group=class_2c, learners=list(pupils), printed_by=teacher, address=None
    )


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def board(client: Client, group) -> str:
    response = client.get(f"/classes/{group.pk}/board/")
    assert response.status_code == 200
    return response.content.decode()


# The address -------------------------------------------------------------------------------


def test_the_cards_page_shows_the_sign_in_address_on_the_page_and_on_every_card(
    class_2c, teacher, pupils
):
    page = client_of(teacher).get(f"/classes/{class_2c.pk}/cards/").content.decode()

    assert f'<span class="cards-address">{ADDRESS}</span>' in page
    assert page.count('class="sign-in-card-address"') == 2
    assert page.count(ADDRESS) >= 3


def test_the_address_is_the_configured_one_shown_as_pupils_type_it(class_2c, teacher, settings):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "web-1.internal"]
    page = (
        client_of(teacher)
        .get(f"/classes/{class_2c.pk}/", HTTP_HOST="web-1.internal")
        .content.decode()
    )
    assert '<strong class="address-large">portal.school.example/card/</strong>' in page
    assert "https://portal.school.example/card/" not in page
    assert "web-1.internal" not in page

    settings.PORTAL_URL = "http://portal.school.lan"
    page = client_of(teacher).get(f"/classes/{class_2c.pk}/").content.decode()

    assert '<strong class="address-large">portal.school.lan/card/</strong>' in page
    assert "http://portal.school.lan/card/" not in page


def test_the_class_page_shows_the_address_large_and_a_way_to_the_board(class_2c, teacher):
    page = client_of(teacher).get(f"/classes/{class_2c.pk}/").content.decode()

    assert f'<strong class="address-large">{ADDRESS}</strong>' in page
    assert f'href="/classes/{class_2c.pk}/board/"' in page
    assert "Show on the board" in page


# The board ---------------------------------------------------------------------------------


def test_the_board_shows_where_to_go_and_how_many_are_in_never_who(
    class_2c, teacher, pupils, cards
):
    window = window_open(group=class_2c, minutes=45, opened_by=teacher, address=None)
    amy = pupils[0]
    CardSession.objects.create(
        card=SignInCard.objects.get(learner=amy, voided_at__isnull=True),
        learner=amy,
        window=window,
        device="Chrome on a Chromebook",
    )

    page = board(client_of(teacher), class_2c)

    assert f'<p class="board-address">{ADDRESS}</p>' in page
    assert "Scan your card or type your code" in page
    assert '<p class="board-count">1 of 2 signed in</p>' in page
    closes = timezone.localtime(window.closes_at).strftime("%H:%M")
    assert f"Sign-in is open until {closes}." in page
    assert 'data-open="1"' in page
    # Counts only: no pupil's name, username, card code or secret, no header or menu.
    for private in ("Amy", "Ben", "amy.pupil", "ben.pupil", "Pupil", "Chromebook"):
        assert private not in page, private
    for card in cards:
        assert card.secret not in page
        assert card.code not in page and card.code_display not in page
    assert "site-header" not in page and "tess.teacher" not in page


def test_the_board_counts_only_live_sign_ins_through_this_classes_own_window(
    class_2c, teacher, pupils, cards
):
    amy, ben = pupils
    class_3d = make_group("3D", level=Level.PRIMARY)
    put_in_group(class_3d, amy)
    other_window = window_open(group=class_3d, minutes=45, opened_by=teacher, address=None)
    window = window_open(group=class_2c, minutes=45, opened_by=teacher, address=None)
    card_of = {p: SignInCard.objects.get(learner=p, voided_at__isnull=True) for p in pupils}
    # Amy, in both classes, signed in through 3D's sign-in; Ben's session in 2C has ended.
    amy_in_3d = CardSession.objects.create(
        card=card_of[amy], learner=amy, window=other_window, device="a laptop"
    )
    CardSession.objects.create(
        card=card_of[ben],
        learner=ben,
        window=window,
        device="a laptop",
        ended_at=timezone.now(),
        end_reason=CardSession.EndReason.ENDED_BY_STAFF,
    )
    client = client_of(teacher)

    assert '<p class="board-count">0 of 2 signed in</p>' in board(client, class_2c)

    amy_in_3d.ended_at = timezone.now()
    amy_in_3d.save()
    CardSession.objects.create(card=card_of[amy], learner=amy, window=window, device="a laptop")

    assert '<p class="board-count">1 of 2 signed in</p>' in board(client, class_2c)


def test_the_board_says_when_sign_in_is_closed_and_stops_asking(class_2c, teacher, pupils):
    window_open(group=class_2c, minutes=30, opened_by=teacher, address=None)
    client = client_of(teacher)
    assert '<p class="board-count">0 of 2 signed in</p>' in board(client, class_2c)

    window_close(group=class_2c, closed_by=teacher, address=None)
    page = board(client, class_2c)

    assert "Sign-in is closed. Wait for your teacher to open it." in page
    assert 'data-open="0"' in page
    assert "board-count" not in page and "Scan your card" not in page
    assert f'<p class="board-address">{ADDRESS}</p>' in page


def test_the_board_is_for_the_classes_own_staff_only(class_2c, teacher):
    other = make_staff("omar.other", role=StaffRole.TEACHER, groups=[make_group("5D")])

    assert client_of(teacher).get(f"/classes/{class_2c.pk}/board/").status_code == 200
    assert client_of(other).get(f"/classes/{class_2c.pk}/board/").status_code == 404


# The board's own requests -------------------------------------------------------------------


def test_the_boards_own_requests_keep_no_staff_session_alive(class_2c, teacher, pupils):
    client = client_of(teacher)
    session = client.session
    an_hour_ago = int(time.time()) - 3600
    session[LAST_ACTIVITY_SESSION_KEY] = an_hour_ago
    session.save()

    response = client.get(f"/classes/{class_2c.pk}/board/", headers={"X-Not-Activity": "1"})

    assert response.status_code == 200 and "board-status" in response.content.decode()
    assert client.session[LAST_ACTIVITY_SESSION_KEY] == an_hour_ago
    assert settings.SESSION_COOKIE_NAME not in response.cookies  # its expiry is not put off

    # The teacher loading the board (or pressing Refresh) is activity.
    client.get(f"/classes/{class_2c.pk}/board/")

    assert client.session[LAST_ACTIVITY_SESSION_KEY] > an_hour_ago


def test_the_boards_script_marks_its_requests_as_not_the_teachers_doing():
    script = (Path(settings.BASE_DIR) / "static/js/lesson_board.js").read_text()

    assert '"X-Not-Activity": "1"' in script
    assert 'redirect: "manual"' in script
