"""Sign-in cards: printed, kept encrypted, reissued; usable only in an open lesson window."""

import logging
import re
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test import Client
from django.utils import timezone

from accounts.models import StaffRole
from assessments.models import AssessmentAttempt, AttemptAnswer
from audit.models import AuditEvent
from learners.models import Level
from lessons.card_secrets import CODE_ALPHABET, CODE_LENGTH
from lessons.devices import device_description
from lessons.models import CardRefusal, CardSession, SignInCard, SignInWindow
from lessons.services import cards_forget_learner, group_cards_print, window_open
from schools.models import PartnerSettings
from tests.factories import (
    PASSWORD,
    make_attempt,
    make_group,
    make_learner,
    make_staff,
    put_in_group,
    settings_form,
    signed_in,
)
from tests.journeys import page_showing

Action = AuditEvent.Action
ANDROID = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/126.0 Mobile Safari/537.36"
)
IPAD = (
    "Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 "
    "Mobile/15E148 Safari/604.1"
)


@pytest.fixture
def class_2c(db):
    group = make_group("2C", level=Level.PRIMARY)
    return group


@pytest.fixture
def teacher(class_2c):
    return make_staff("tess.teacher", role=StaffRole.TEACHER, groups=[class_2c])


@pytest.fixture
def pupils(class_2c):
    amy, ben = make_learner("amy.pupil", "u-amy"), make_learner("ben.pupil", "u-ben")
    for pupil in (amy, ben):
        pupil.level = Level.PRIMARY
        pupil.save()
    put_in_group(class_2c, amy, ben)
    return amy, ben


@pytest.fixture
def cards(class_2c, teacher, pupils):
    """The class's cards as printed, by first name."""
    printed = group_cards_print(
        group=class_2c, learners=list(pupils), printed_by=teacher, address="127.0.0.1"
    )
    return {card.learner.first_name: card for card in printed}


@pytest.fixture
def lesson(class_2c, teacher):
    return window_open(group=class_2c, minutes=30, opened_by=teacher, address="127.0.0.1")


def device(agent: str = ANDROID, address: str = "127.0.0.1") -> Client:
    return Client(HTTP_USER_AGENT=agent, REMOTE_ADDR=address)


def card_in(client: Client, *, secret: str = "", code: str = ""):
    """Scan (or type) a card and tap "That's me"; return the two responses."""
    first = client.post("/card/", {"secret": secret} if secret else {"code": code})
    if first.status_code != 200 or "That's me" not in first.content.decode():
        return first, None
    return first, client.post("/card/", {"confirm": "1"})


def is_signed_in(client: Client) -> bool:
    """Say whether the device reads the learner's own page; False when sent to sign in.

    Any other answer fails the test: signed out is proved by a way to sign in again (the sign-in
    page, or the card page saying the card's session ended), not by an error.
    """
    response = client.get("/me/")
    if response.status_code == 200:
        assert "<h1>My assessments</h1>" in response.content.decode()
        return True
    assert response.status_code == 302, response.status_code
    assert response.url.startswith(("/accounts/login/?next=/me/", "/card/?ended=1")), response.url
    return False


# Printing ----------------------------------------------------------------------------------


def test_the_cards_page_prints_each_pupil_a_card_with_a_qr_code_and_a_typed_code(
    class_2c, teacher, pupils
):
    response = signed_in(teacher).get(f"/classes/{class_2c.pk}/cards/")

    page = response.content.decode()
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    assert page.count('class="sign-in-card"') == 2
    assert "Amy" in page and "Ben" in page and "2C" in page
    assert page.count("<svg") == 2  # drawn here, nothing fetched: no <img> of a QR service
    codes = re.findall(r'class="sign-in-card-code">.*?</span>([A-Z0-9-]+)</p>', page)
    assert len(codes) == 2
    for code in codes:
        letters = code.replace("-", "")
        assert len(letters) == CODE_LENGTH and set(letters) <= set(CODE_ALPHABET)
    # At least 40 bits in the typed code.
    assert len(CODE_ALPHABET) ** CODE_LENGTH >= 2**40


def test_printing_again_gives_the_same_cards_kept_encrypted_never_in_plain_text(
    class_2c, teacher, pupils, cards
):
    again = group_cards_print(
        group=class_2c, learners=list(pupils), printed_by=teacher, address=None
    )

    assert {card.code for card in again} == {card.code for card in cards.values()}
    assert {card.secret for card in again} == {card.secret for card in cards.values()}
    assert len(cards["Amy"].secret) >= 22  # at least 128 bits of URL-safe base64
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM lessons_signincard")
        stored = repr(cursor.fetchall())
    for card in cards.values():
        assert card.secret not in stored and card.code not in stored
    printed = AuditEvent.objects.filter(action=Action.CARDS_PRINTED)
    assert [event.detail["issued"] for event in printed.order_by("at", "id")] == [2, 0]


def test_the_qr_code_holds_the_card_address_with_the_secret_after_the_hash(
    class_2c, teacher, pupils, settings
):
    settings.PORTAL_URL = "https://portal.school.example"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "web-1.internal"]
    page = (
        signed_in(teacher)
        .get(f"/classes/{class_2c.pk}/cards/", HTTP_HOST="web-1.internal")
        .content.decode()
    )
    card = SignInCard.objects.get(learner=pupils[0])

    from lessons.card_secrets import unseal

    secret = unseal(card.secret_encrypted)
    # The SVG encodes the URL; check what was encoded by drawing it again.
    from lessons.qr import qr_svg

    # The full configured address, scheme and all, never the host this request came by.
    expected = qr_svg(f"https://portal.school.example/card/#{secret}", label="Sign-in QR code")
    assert str(expected) in page
    assert "web-1.internal" not in page


def test_only_the_groups_staff_and_admins_print_its_cards(class_2c, pupils, teacher):
    other_teacher = make_staff("otto.teacher", role=StaffRole.TEACHER)
    admin = make_staff("ada.admin", role=StaffRole.ADMIN)
    learner_account = pupils[0].user

    assert signed_in(admin).get(f"/classes/{class_2c.pk}/cards/").status_code == 200
    assert signed_in(other_teacher).get(f"/classes/{class_2c.pk}/cards/").status_code == 404
    assert signed_in(learner_account).get(f"/classes/{class_2c.pk}/cards/").status_code == 404
    assert Client().get(f"/classes/{class_2c.pk}/cards/").status_code == 302
    assert signed_in(other_teacher).get(f"/learners/{pupils[0].pk}/card/").status_code == 404
    assert signed_in(teacher).get(f"/learners/{pupils[0].pk}/card/").status_code == 200


def test_one_learners_card_prints_from_their_page(class_2c, teacher, pupils, cards):
    record = signed_in(teacher).get(f"/learners/{pupils[0].pk}/").content.decode()
    assert f"/learners/{pupils[0].pk}/card/" in record

    page = signed_in(teacher).get(f"/learners/{pupils[0].pk}/card/").content.decode()

    assert page.count('class="sign-in-card"') == 1
    assert cards["Amy"].code_display in page


def test_void_and_reissue_makes_a_new_card_and_the_old_one_stops_working(
    class_2c, teacher, pupils, cards, lesson
):
    amy = pupils[0]
    old_device = device()
    card_in(old_device, secret=cards["Amy"].secret)
    assert is_signed_in(old_device)

    signed_in(teacher).post(f"/learners/{amy.pk}/card/reissue/")

    assert not is_signed_in(old_device)  # its session ended with the card
    first, _ = card_in(device(), secret=cards["Amy"].secret)
    assert first.status_code == 403
    new = group_cards_print(group=class_2c, learners=[amy], printed_by=teacher, address=None)[0]
    assert new.code != cards["Amy"].code
    _, signed = card_in(device(), code=new.code)
    assert signed.status_code == 302
    assert AuditEvent.objects.filter(action=Action.CARD_REISSUED, learner=amy).count() == 1


def test_reissuing_a_whole_group_needs_the_tick_and_voids_every_card(
    class_2c, teacher, pupils, cards, lesson
):
    url = f"/classes/{class_2c.pk}/cards/reissue/"
    signed_in(teacher).post(url, {})
    assert SignInCard.objects.filter(voided_at__isnull=False).count() == 0

    signed_in(teacher).post(url, {"confirm": "on"})

    assert SignInCard.objects.filter(voided_at__isnull=False).count() == 2
    assert SignInCard.objects.filter(voided_at__isnull=True).count() == 2
    for card in cards.values():
        assert card_in(device(), code=card.code)[0].status_code == 403


# Signing in --------------------------------------------------------------------------------


def test_a_get_never_signs_anyone_in(cards, lesson):
    client = device()
    response = client.get("/card/", {"secret": cards["Amy"].secret, "code": cards["Amy"].code})

    assert response.status_code == 200
    assert "Scan your card" in response.content.decode()
    assert not is_signed_in(client)


def test_a_card_signs_its_pupil_in_after_thats_me_while_the_window_is_open(cards, lesson, pupils):
    client = device()
    first, second = card_in(client, secret=cards["Amy"].secret)

    assert "That's me: Amy" in first.content.decode()
    assert second.status_code == 302 and second["Location"] == "/me/"
    me = client.get("/me/").content.decode()
    assert "You are signed in as Amy." in me  # a primary pupil's words
    session = CardSession.objects.get(learner=pupils[0])
    assert session.device == "Chrome on an Android phone"
    assert session.ended_at is None


def test_the_first_post_alone_signs_nobody_in(cards, lesson):
    client = device()
    first = client.post("/card/", {"secret": cards["Amy"].secret})
    assert first.status_code == 200 and "<h1>Is this you?</h1>" in first.content.decode()
    assert not is_signed_in(client)


def test_the_typed_code_works_in_any_case_with_or_without_the_hyphen(cards, lesson):
    code = cards["Ben"].code
    typed = f" {code[:5].lower()} - {code[5:]} "
    first, second = card_in(device(), code=typed)
    assert "That's me: Ben" in first.content.decode()
    assert second.status_code == 302


def test_a_code_of_the_wrong_length_is_explained_and_kept(lesson):
    response = device().post("/card/", {"code": "ACD"})
    page = response.content.decode()
    assert response.status_code == 200
    assert "The code has 10 letters and numbers" in page
    assert 'value="ACD"' in page


REVEALING = ("Amy", "Ben", "2C", "Pupil")


def assert_refused_revealing_nothing(response) -> None:
    page = response.content.decode()
    assert response.status_code == 403
    assert "Ask your teacher" in page
    for word in REVEALING:
        assert word not in page, word


def test_outside_an_open_window_a_card_reveals_nothing(cards):
    assert_refused_revealing_nothing(device().post("/card/", {"secret": cards["Amy"].secret}))
    assert_refused_revealing_nothing(device().post("/card/", {"code": cards["Amy"].code}))


def test_an_unknown_code_gets_the_same_page(lesson):
    assert_refused_revealing_nothing(device().post("/card/", {"code": "AAAAA-AAAAA"}))
    assert_refused_revealing_nothing(device().post("/card/", {"secret": "x" * 24}))


def test_a_window_caps_at_the_partners_maximum(class_2c, teacher):
    settings = PartnerSettings.current()
    settings.card_window_max_minutes = 20
    settings.save()

    response = signed_in(teacher).post(f"/classes/{class_2c.pk}/sign-in/open/", {"minutes": 90})
    assert not SignInWindow.objects.exists()
    assert response.status_code == 302

    signed_in(teacher).post(f"/classes/{class_2c.pk}/sign-in/open/", {"minutes": 20})
    window = SignInWindow.objects.get()
    assert window.closes_at - window.opened_at <= timedelta(minutes=20, seconds=5)
    assert AuditEvent.objects.filter(action=Action.SIGN_IN_OPENED).count() == 1


def test_closing_the_window_ends_card_sessions_and_refuses_cards(class_2c, teacher, cards, lesson):
    client = device()
    card_in(client, secret=cards["Amy"].secret)
    assert is_signed_in(client)

    signed_in(teacher).post(f"/classes/{class_2c.pk}/sign-in/close/")

    response = client.get("/me/")
    assert response.status_code == 302 and response["Location"] == "/card/?ended=1"
    assert not is_signed_in(client)
    assert_refused_revealing_nothing(device().post("/card/", {"secret": cards["Amy"].secret}))
    assert CardSession.objects.get().end_reason == CardSession.EndReason.WINDOW_CLOSED
    assert AuditEvent.objects.filter(action=Action.SIGN_IN_CLOSED).count() == 1


def test_a_window_that_runs_out_ends_its_sessions_too(cards, lesson):
    client = device()
    card_in(client, secret=cards["Amy"].secret)
    SignInWindow.objects.update(closes_at=timezone.now() - timedelta(seconds=1))

    assert not is_signed_in(client)
    assert CardSession.objects.get().ended_at is not None
    assert card_in(device(), secret=cards["Amy"].secret)[0].status_code == 403


def test_only_the_school_network_may_use_cards_when_ranges_are_set(cards, lesson):
    settings = PartnerSettings.current()
    settings.card_networks = "10.0.0.0/8\n192.0.2.0/24"
    settings.save()

    assert_refused_revealing_nothing(
        device(address="127.0.0.1").post("/card/", {"secret": cards["Amy"].secret})
    )
    _, signed = card_in(device(address="10.20.30.40"), secret=cards["Amy"].secret)
    assert signed.status_code == 302


def test_a_card_live_on_one_device_is_refused_on_another_and_shown_to_the_teacher(
    class_2c, teacher, cards, lesson
):
    first_device, second_device = device(), device(IPAD)
    card_in(first_device, secret=cards["Amy"].secret)

    first, second = card_in(second_device, secret=cards["Amy"].secret)

    assert second is None  # refused at the scan, before "That's me" could name her
    assert_refused_revealing_nothing(first)
    assert not is_signed_in(second_device)
    assert is_signed_in(first_device)
    refusal = CardRefusal.objects.get()
    assert refusal.device == "Safari on an iPad"
    roster = signed_in(teacher).get(f"/classes/{class_2c.pk}/lesson/roster/").content.decode()
    assert "Card refused: already in use (1 time" in roster


def test_forgetting_a_pupils_cards_deletes_them_with_their_sessions_and_refusals(
    cards, lesson, pupils
):
    amy, ben = pupils
    card_in(device(), secret=cards["Amy"].secret)
    card_in(device(IPAD), secret=cards["Amy"].secret)  # refused: live on the first device
    card_in(device(), secret=cards["Ben"].secret)
    kinds = (SignInCard, CardSession, CardRefusal)
    assert [kind.objects.filter(learner=amy).count() for kind in kinds] == [1, 1, 1]

    with transaction.atomic():  # the erasure's transaction, which the service runs in
        assert cards_forget_learner(learner=amy) == 3

    assert [kind.objects.filter(learner=amy).count() for kind in kinds] == [0, 0, 0]
    assert card_in(device(), secret=cards["Amy"].secret)[0].status_code == 403
    assert [kind.objects.filter(learner=ben).count() for kind in kinds] == [1, 1, 0]


def test_of_two_devices_tapping_thats_me_together_only_one_gets_in(cards, lesson):
    first_device, second_device = device(), device(IPAD)
    for client in (first_device, second_device):
        client.post("/card/", {"secret": cards["Amy"].secret})  # both scanned: "That's me"

    answers = [client.post("/card/", {"confirm": "1"}) for client in (first_device, second_device)]

    assert [answer.status_code for answer in answers] == [302, 403]
    assert CardSession.objects.filter(ended_at__isnull=True).count() == 1
    assert CardRefusal.objects.get().device == "Safari on an iPad"


def test_the_same_device_scanning_again_stays_signed_in(cards, lesson):
    client = device()
    card_in(client, secret=cards["Amy"].secret)
    _, again = card_in(client, secret=cards["Amy"].secret)
    assert again.status_code == 302
    assert is_signed_in(client)
    assert CardRefusal.objects.count() == 0


def test_a_card_on_a_shared_device_ends_the_previous_pupils_session(cards, lesson, pupils):
    shared = device()
    card_in(shared, secret=cards["Amy"].secret)

    card_in(shared, secret=cards["Ben"].secret)

    me = shared.get("/me/").content.decode()
    assert "You are signed in as Ben." in me
    amy_session = CardSession.objects.get(learner=pupils[0])
    assert amy_session.end_reason == CardSession.EndReason.REPLACED
    # Amy's card is free again for another device.
    assert card_in(device(IPAD), secret=cards["Amy"].secret)[1].status_code == 302


def test_signing_out_frees_the_card(cards, lesson):
    client = device()
    card_in(client, secret=cards["Amy"].secret)
    client.post("/accounts/logout/")
    assert CardSession.objects.get().end_reason == CardSession.EndReason.SIGNED_OUT
    assert card_in(device(IPAD), secret=cards["Amy"].secret)[1].status_code == 302


def test_the_teacher_ends_one_pupils_session_from_the_lesson(
    class_2c, teacher, cards, lesson, pupils
):
    amy_device, ben_device = device(), device(IPAD)
    card_in(amy_device, secret=cards["Amy"].secret)
    card_in(ben_device, secret=cards["Ben"].secret)
    session = CardSession.objects.get(learner=pupils[0])

    signed_in(teacher).post(f"/classes/{class_2c.pk}/lesson/sessions/{session.pk}/end/")

    assert not is_signed_in(amy_device)
    assert is_signed_in(ben_device)
    assert AuditEvent.objects.filter(action=Action.CARD_SESSION_ENDED, learner=pupils[0]).exists()


def test_the_roster_shows_who_is_in_where_and_how_far(
    class_2c, teacher, cards, lesson, pupils, settings
):
    # Not the default 127.0.0.1:8000: the device's address (127.0.0.1) must not show.
    settings.PORTAL_URL = "https://portal.school.example"
    amy, ben = pupils
    card_in(device(), secret=cards["Amy"].secret)
    attempt = make_attempt(amy)
    AttemptAnswer.objects.create(attempt=attempt, question_id="q-sleep", answer_id="q-sleep-a1")
    AttemptAnswer.objects.create(attempt=attempt, question_id="q-wake", answer_id="q-wake-a2")
    make_attempt(ben, state=AssessmentAttempt.State.COMPLETED)

    page = signed_in(teacher).get(f"/classes/{class_2c.pk}/").content.decode()

    assert "Card sign-in is open until" in page
    assert f'data-roster-url="/classes/{class_2c.pk}/lesson/roster/"' in page
    assert "1 of 2 pupils signed in by card, 1 finished." in page
    row_amy = page[page.index("Amy Pupil</strong>") :][:900]
    assert "Signed in" in row_amy and "Chrome on an Android phone" in row_amy
    # 2C is a primary class: one question a page, and Amy has answered two of three.
    assert "Page 3 of 3" in row_amy
    assert "127.0.0.1" not in page
    row_ben = page[page.index("Ben Pupil</strong>") :][:600]
    assert "Not signed in" in row_ben and "Finished" in row_ben


def test_a_dsl_who_is_not_the_groups_teacher_sees_no_lesson_controls(class_2c, lesson):
    dsl = make_staff("dee.dsl", role=StaffRole.DSL)
    page = page_showing(signed_in(dsl), f"/classes/{class_2c.pk}/", "<h1>2C <span")
    assert "Lesson sign-in" not in page
    assert signed_in(dsl).post(f"/classes/{class_2c.pk}/sign-in/close/").status_code == 404


def test_thats_me_must_follow_soon(cards, lesson, monkeypatch):
    client = device()
    client.post("/card/", {"secret": cards["Amy"].secret})
    import lessons.views

    monkeypatch.setattr(lessons.views, "PENDING_SECONDS", -1)
    response = client.post("/card/", {"confirm": "1"})
    assert "That took a little too long" in response.content.decode()
    assert not is_signed_in(client)


def test_many_refused_cards_from_one_address_pause_clients_without_a_device_there(
    settings, lesson, cards
):
    settings.CARD_REFUSAL_LIMIT_PER_IP = 3
    for _ in range(3):
        device().post("/card/", {"code": "AAAAA-AAAAA"})
    response = device().post("/card/", {"secret": cards["Amy"].secret})
    assert response.status_code == 429
    # Another address is not affected; nor is a device there that opened the card page.
    assert card_in(device(address="10.0.0.9"), secret=cards["Amy"].secret)[1].status_code == 302
    tablet = device()
    tablet.get("/card/")
    assert card_in(tablet, secret=cards["Ben"].secret)[1].status_code == 302


def test_no_card_secret_or_code_reaches_a_log(caplog, class_2c, teacher, cards, lesson):
    caplog.set_level(logging.DEBUG)
    assert card_in(device(), secret=cards["Amy"].secret)[1].status_code == 302
    assert card_in(device(IPAD), secret=cards["Amy"].secret)[0].status_code == 403  # in use
    assert card_in(device(), code=cards["Ben"].code)[1].status_code == 302
    device().post("/card/", {"code": "AAAAA-AAAAA"})
    assert signed_in(teacher).get(f"/classes/{class_2c.pk}/cards/").status_code == 200

    logged = "\n".join(record.getMessage() for record in caplog.records)
    # The log was captured, the refusal among it: what is not there was not written.
    assert f"Card of learner {cards['Amy'].learner.pk} refused: in use" in logged
    for card in cards.values():
        assert card.secret not in logged and card.code not in logged


# Passwords for primary pupils ---------------------------------------------------------------


def test_primary_pupils_may_be_kept_to_cards_by_the_partner(pupils):
    amy = pupils[0]
    secondary = make_learner("sam.senior", "u-sam")
    settings = PartnerSettings.current()
    settings.primary_cards_only = True
    settings.save()

    refused = Client().post("/accounts/login/", {"username": amy.username, "password": PASSWORD})
    assert "Primary pupils sign in with their sign-in card" in refused.content.decode()
    assert (
        Client()
        .post("/accounts/login/", {"username": secondary.username, "password": PASSWORD})
        .status_code
        == 302
    )

    settings.primary_cards_only = False
    settings.save()
    assert (
        Client()
        .post("/accounts/login/", {"username": amy.username, "password": PASSWORD})
        .status_code
        == 302
    )


def test_a_wrong_password_for_a_primary_pupil_says_only_that_it_is_wrong(pupils):
    settings = PartnerSettings.current()
    settings.primary_cards_only = True
    settings.save()
    page = (
        Client()
        .post("/accounts/login/", {"username": pupils[0].username, "password": "wrong-one-42"})
        .content.decode()
    )
    assert "sign-in card" not in page
    assert "Enter a correct username and password." in page


def test_the_settings_page_refuses_a_network_that_is_not_one(db):
    admin = make_staff("ada.admin", role=StaffRole.ADMIN)
    response = signed_in(admin).post(
        "/settings/",
        settings_form(card_networks="10.0.0.0/8\nschool wifi", card_window_max_minutes=60),
    )
    assert "“school wifi” is not an address range" in response.content.decode()
    response = signed_in(admin).post(
        "/settings/",
        settings_form(card_networks="203.0.113.0/24", card_window_max_minutes=45),
    )
    assert response.status_code == 302
    current = PartnerSettings.current()
    assert current.card_networks == "203.0.113.0/24" and current.card_window_max_minutes == 45


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        (ANDROID, "Chrome on an Android phone"),
        (IPAD, "Safari on an iPad"),
        (
            "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 Chrome/126.0 "
            "Safari/537.36",
            "Chrome on a Chromebook",
        ),
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/126.0 "
            "Safari/537.36 Edg/126.0",
            "Edge on a Windows computer",
        ),
        ("", "Unknown device"),
    ],
)
def test_devices_are_described_briefly(agent, expected):
    assert device_description(agent) == expected
