"""Refused cards are counted per device, per card and per address: a school keeps working.

A school is one address. A class mistyping, or one pupil mashing keys, locks at most the device
it happens on; a valid card is refused only when that card or that device is locked. Staff see
the locks on /sign-in-locks/ and lift them, audited.
"""

import re

import pytest
from django.test import Client

from accounts.models import SignInLock, StaffRole
from audit.models import AuditEvent
from learners.models import Level
from learners.services import learner_password_reset
from lessons.card_secrets import CODE_ALPHABET, CODE_LENGTH
from lessons.card_throttle import DEVICE_COOKIE
from lessons.services import group_cards_print, window_open
from tests.factories import make_group, make_learner, make_staff, put_in_group
from tests.journeys import page_showing

SCHOOL = "203.0.113.7"
STAFF_DESK = "198.51.100.20"
LOCKS = "/sign-in-locks/"
CHROMEBOOK = "Mozilla/5.0 (X11; CrOS x86_64 15633.69.0) AppleWebKit/537.36 Chrome/126.0 Safari/537"
TOO_MANY = "Lots of cards have been tried here."
ASK = "This card can't sign you in just now."


@pytest.fixture
def class_3a(db):
    return make_group("3A", level=Level.PRIMARY)


@pytest.fixture
def teacher(class_3a):
    return make_staff("tess.teacher", role=StaffRole.TEACHER, groups=[class_3a])


@pytest.fixture
def cards(class_3a, teacher):
    """Thirty pupils' cards as printed, in class order."""
    pupils = [make_learner(f"pupil{number:02}.three", f"u-{number}") for number in range(30)]
    put_in_group(class_3a, *pupils)
    return group_cards_print(group=class_3a, learners=pupils, printed_by=teacher, address=None)


@pytest.fixture
def lesson(class_3a, teacher):
    return window_open(group=class_3a, minutes=30, opened_by=teacher, address=SCHOOL)


def tablet(address: str = SCHOOL) -> Client:
    """A school device that has opened the card page, and so holds its device cookie."""
    client = Client(HTTP_USER_AGENT=CHROMEBOOK, REMOTE_ADDR=address)
    assert client.get("/card/").status_code == 200
    assert client.cookies[DEVICE_COOKIE].value
    return client


def script(address: str = SCHOOL) -> Client:
    """A client that never opened the card page: no device cookie."""
    return Client(REMOTE_ADDR=address)


def wrong_code(number: int) -> str:
    """Return a well-formed code that no card has (its digits in the code's alphabet)."""
    symbols = []
    for _ in range(CODE_LENGTH):
        number, digit = divmod(number, len(CODE_ALPHABET))
        symbols.append(CODE_ALPHABET[digit])
    return "".join(symbols)


def try_code(client: Client, code: str):
    return client.post("/card/", {"code": code})


def signs_in(client: Client, code: str) -> bool:
    """Type a card's code and tap "That's me"; say whether the pupil's page opens."""
    first = try_code(client, code)
    if first.status_code != 200 or "That's me" not in first.content.decode():
        return False
    confirmed = client.post("/card/", {"confirm": "1"})
    return confirmed.status_code == 302 and confirmed.url == "/me/"


def refused(response, note: str, status: int) -> bool:
    return response.status_code == status and note in response.content.decode()


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def lift(client: Client, lock: SignInLock):
    return client.post(f"{LOCKS}{lock.pk}/lift/", REMOTE_ADDR=STAFF_DESK)


def test_a_class_mistyping_120_codes_then_signs_in_30_of_30(cards, lesson):
    tablets = [tablet() for _ in cards]
    for number in range(120):
        assert refused(try_code(tablets[number % 30], wrong_code(number)), ASK, 403)

    signed_in = sum(
        signs_in(device, card.code) for device, card in zip(tablets, cards, strict=True)
    )

    assert signed_in == 30


def test_one_pupil_mashing_120_codes_locks_only_their_device(cards, lesson):
    mashed = tablet()
    answers = [try_code(mashed, wrong_code(number)) for number in range(120)]
    # The device's limit (20 by default) locks it; the school's address is far from its own.
    assert all(refused(answer, ASK, 403) for answer in answers[:20])
    assert all(refused(answer, TOO_MANY, 429) for answer in answers[20:])

    signed_in = sum(signs_in(tablet(), card.code) for card in cards)

    assert signed_in == 30
    assert refused(try_code(mashed, cards[0].code), TOO_MANY, 429)
    assert list(SignInLock.objects.values_list("kind", flat=True)) == ["card_device"]


def test_a_locked_device_is_refused_a_valid_card_until_its_teacher_lifts_the_lock(
    teacher, cards, lesson
):
    locked, beside = tablet(), tablet()
    for number in range(20):
        try_code(locked, wrong_code(number))

    assert refused(try_code(locked, cards[0].code), TOO_MANY, 429)
    assert signs_in(beside, cards[1].code)

    staff = Client()
    staff.force_login(teacher)
    page = text(page_showing(staff, LOCKS, "Signing in with any card on this device"))
    assert f"Chrome on a Chromebook at {SCHOOL}" in page
    response = lift(staff, SignInLock.objects.get(kind="card_device"))
    assert response.status_code == 302 and response.url == LOCKS
    page = text(page_showing(staff, LOCKS, "No sign-in is locked at the moment."))
    assert f"Card sign-in on Chrome on a Chromebook at {SCHOOL} is open again." in page
    assert signs_in(locked, cards[0].code)
    event = AuditEvent.objects.get(action=AuditEvent.Action.SIGN_IN_LOCK_LIFTED)
    assert (event.actor, event.ip_address, event.learner) == (teacher, STAFF_DESK, None)
    assert event.detail["scope"] == "card_device"
    assert event.detail["locked_device"] == "Chrome on a Chromebook"


def test_a_sign_in_clears_its_devices_count_so_a_shared_tablet_goes_on(cards, lesson):
    shared = tablet()
    for turn, card in enumerate(cards[:3]):
        for number in range(19):  # each pupil mistypes one short of the device's limit
            assert refused(try_code(shared, wrong_code(turn * 19 + number)), ASK, 403)
        assert signs_in(shared, card.code)


def test_a_card_refused_again_and_again_is_locked_on_every_device(class_3a, teacher, cards):
    amy = cards[0]
    # Before the lesson opens, Amy's card is tried 20 times on four devices: none at its limit.
    devices = [tablet() for _ in range(4)]
    for number in range(20):
        assert refused(try_code(devices[number % 4], amy.code), ASK, 403)
    window_open(group=class_3a, minutes=30, opened_by=teacher, address=SCHOOL)

    # Locked, her card looks like any refused card; the next pupil's card signs in there.
    assert refused(try_code(tablet(), amy.code), ASK, 403)
    assert signs_in(devices[0], cards[1].code)

    staff = Client()
    staff.force_login(teacher)
    page = text(page_showing(staff, LOCKS, "Signing in with this pupil's card, on any device"))
    assert f"Lift the lock on {amy.learner.display_name}" in page
    lift(staff, SignInLock.objects.get(kind="card"))
    assert f"The lock on the sign-in card of {amy.learner.display_name} is lifted." in text(
        page_showing(staff, LOCKS, "Sign-in locks")
    )
    assert signs_in(tablet(), amy.code)
    event = AuditEvent.objects.get(action=AuditEvent.Action.SIGN_IN_LOCK_LIFTED)
    assert (event.learner, event.detail["scope"]) == (amy.learner, "card")


def test_an_address_lock_stops_only_clients_without_the_device_cookie(
    settings, admin_client, cards, lesson
):
    settings.CARD_REFUSAL_LIMIT_PER_IP = 50
    guesser = script()
    for number in range(60):
        try_code(guesser, wrong_code(number))

    assert refused(try_code(script(), cards[0].code), TOO_MANY, 429)
    forged = script()
    forged.cookies[DEVICE_COOKIE] = "made-up-device"
    assert refused(try_code(forged, cards[0].code), TOO_MANY, 429)
    assert signs_in(tablet(), cards[0].code)
    assert signs_in(script(address="192.0.2.80"), cards[1].code)  # another address

    page = text(page_showing(admin_client, LOCKS, "on browsers without the card page's cookie"))
    assert SCHOOL in page
    lift(admin_client, SignInLock.objects.get(kind="card_address"))
    assert f"Card sign-in from {SCHOOL} is open again." in text(
        page_showing(admin_client, LOCKS, "Sign-in locks")
    )
    assert signs_in(script(), cards[2].code)


def test_a_password_reset_leaves_the_pupils_card_lock_in_place(class_3a, teacher, cards):
    amy = cards[0]
    for _ in range(20):
        try_code(script(), amy.code)
    window_open(group=class_3a, minutes=30, opened_by=teacher, address=SCHOOL)

    learner_password_reset(learner=amy.learner, password="new-Pass-2468", reset_by=teacher)

    # The row still shows the card's lock, which still holds: the reset is about the password.
    assert SignInLock.objects.current().get().kind == "card"
    assert refused(try_code(tablet(), amy.code), ASK, 403)
    assert signs_in(tablet(), cards[1].code)


def test_a_class_scanning_real_cards_before_the_lesson_opens_never_locks_the_tablet(
    class_3a, teacher, cards
):
    shared = tablet()
    # All thirty pupils try their own card before the teacher opens sign-in: each is refused.
    assert all(refused(try_code(shared, card.code), ASK, 403) for card in cards)
    window_open(group=class_3a, minutes=30, opened_by=teacher, address=SCHOOL)

    # Each card was refused once (far from its limit) and the tablet counted none of them.
    assert signs_in(shared, cards[0].code)
    assert not SignInLock.objects.exists()


def test_an_address_gets_only_so_many_new_device_cookies_then_falls_under_its_limit(
    settings, cards, lesson
):
    settings.CARD_NEW_DEVICES_PER_IP = 3
    for _ in range(3):
        tablet()  # each new browser gets its device cookie

    fresh = script()
    page = fresh.get("/card/")

    assert page.status_code == 200 and "Sign in with your card" in page.content.decode()
    assert DEVICE_COOKIE not in fresh.cookies  # a script fetching cookie after cookie stops here
    assert signs_in(tablet(address="192.0.2.80"), cards[0].code)  # another school's devices
