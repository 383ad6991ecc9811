"""Learners who left the school: their record says so, they sign in nowhere, start nothing."""

import csv
import io
import re
from datetime import datetime

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.http import StreamingHttpResponse
from django.test import Client
from django.utils import timezone

from accounts.models import StaffRole
from assessments.models import AssessmentAttempt
from lessons.services import group_cards_print, window_open
from schools.models import PartnerSettings
from signin.claims import SchoolIdentity
from signin.identities import IdentityRefused, Refusal, identity_account
from tests.factories import PASSWORD, make_group, make_learner, make_staff, put_in_group, signed_in
from tests.journeys import page_showing

LEFT_ON = datetime(2026, 7, 22, 12, tzinfo=timezone.get_current_timezone())
LEFT_NOTICE = "Left the school on 22 July 2026"
INVALID = "Enter a correct username and password."
LEFT_PAGE = "<h1>Your school's records say you have left</h1>"


def leave(learner, *, close_account: bool = True):
    """Mark a learner as left as the roster does: left_at, account closed, out of their classes."""
    learner.group_memberships.filter(left_at__isnull=True).update(left_at=LEFT_ON)
    learner.left_at = LEFT_ON
    learner.save(update_fields=["left_at"])
    if close_account:
        learner.user.is_active = False
        learner.user.save(update_fields=["is_active"])
    return learner


@pytest.fixture(autouse=True)
def fresh_throttle_counts():
    """Failed sign-ins are counted in the cache: each test starts with none."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def admin(db) -> User:
    return make_staff("ada.admin", role=StaffRole.ADMIN)


@pytest.fixture
def class_9c(db):
    return make_group("9C")


@pytest.fixture
def teacher(class_9c) -> User:
    return make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[class_9c])


@pytest.fixture
def leaver(class_9c):
    lee = make_learner("lee.leaver", "u-lee")
    lee.email = "lee@school.example"
    lee.save(update_fields=["email"])
    put_in_group(class_9c, lee)
    return leave(lee)


# What staff see --------------------------------------------------------------------------------


def test_a_leavers_record_says_when_they_left_and_how_long_it_is_kept(admin, leaver):
    PartnerSettings.objects.update(retention_years=5)

    page = page_showing(signed_in(admin), f"/learners/{leaver.pk}/", LEFT_NOTICE)

    assert "They can no longer sign in or start an assessment" in page
    assert "retention period (5 years after their last activity)" in page
    assert "a safeguarding hold keeps them for as long as it lasts" in page
    assert 'href="#personal-data"' in page and 'id="personal-data"' in page
    assert "Reset password" not in page


def test_a_current_learners_record_says_nothing_of_leaving(admin, class_9c):
    pupil = make_learner("pia.pupil", "u-pia")

    page = page_showing(signed_in(admin), f"/learners/{pupil.pk}/", "Reset password")

    assert "Left the school" not in page


def test_the_list_tags_leavers_for_admins_and_teachers_no_longer_see_them(
    admin, teacher, class_9c, leaver
):
    stays = make_learner("sam.stays", "u-sam")
    put_in_group(class_9c, stays)

    for_admin = page_showing(signed_in(admin), "/learners/", "2 learners")
    for_teacher = page_showing(signed_in(teacher), "/learners/", "1 learner")

    row = re.search(r"<tr>\s*<th scope=\"row\"><a[^>]*>Lee Pupil</a>(.*?)</th>", for_admin, re.S)
    assert row and '<span class="tag">Left' in row[1] and "the school on 22 Jul 2026" in row[1]
    sam = re.search(r"<a[^>]*>Sam Pupil</a>(.*?)</th>", for_admin, re.S)
    assert sam and "Left" not in sam[1]
    assert "Sam Pupil" in for_teacher and "lee.leaver" not in for_teacher
    assert signed_in(teacher).get(f"/learners/{leaver.pk}/").status_code == 404


def test_the_learners_csv_gives_each_leavers_leaving_day(admin, leaver):
    make_learner("sam.stays", "u-sam")

    response = signed_in(admin).get("/learners/learners.csv")

    assert isinstance(response, StreamingHttpResponse) and response.status_code == 200
    text = b"".join(response.streaming_content).decode("utf-8")
    rows = {row["username"]: row for row in csv.DictReader(io.StringIO(text[1:]))}
    assert rows["lee.leaver"]["left_on"] == "2026-07-22"
    assert rows["sam.stays"]["left_on"] == ""


# Signing in ------------------------------------------------------------------------------------


def error_summary(response) -> str:
    """Return the text of the page's error summary, or "" when it has none."""
    match = re.search(r'<div class="error-summary".*?</div>', response.content.decode(), re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", match[0])).strip() if match else ""


def test_a_leaver_signing_in_with_their_password_is_told_only_what_a_wrong_one_is_told(leaver):
    right = Client().post("/accounts/login/", {"username": "lee.leaver", "password": PASSWORD})
    wrong = Client().post("/accounts/login/", {"username": "lee.leaver", "password": "nope-123"})

    assert right.status_code == 200 and INVALID in error_summary(right)
    assert error_summary(right) == error_summary(wrong)
    assert "left" not in error_summary(right).lower()


def test_a_signed_in_pupil_who_leaves_is_sent_to_sign_in(class_9c):
    pupil = make_learner("pia.pupil", "u-pia")
    client = signed_in(pupil.user)
    page_showing(client, "/me/", "My assessments")

    leave(pupil)
    response = client.get("/me/")

    assert response.status_code == 302 and response.url.startswith("/accounts/login/")


def card_of(learner, group, staff):
    """Print the learner's card and open their class's card sign-in; return the card."""
    card = group_cards_print(group=group, learners=[learner], printed_by=staff, address=None)[0]
    window_open(group=group, minutes=30, opened_by=staff, address=None)
    return card


def test_a_leavers_card_no_longer_signs_in_even_one_that_was_not_voided(admin, class_9c):
    pupil = make_learner("pia.pupil", "u-pia")
    put_in_group(class_9c, pupil)
    card = card_of(pupil, class_9c, admin)
    before = Client().post("/card/", {"code": card.code})
    assert before.status_code == 200 and "That's me: Pia" in before.content.decode()

    # The records say she left; her account and card were somehow left as they were.
    pupil.left_at = LEFT_ON
    pupil.save(update_fields=["left_at"])
    after = Client().post("/card/", {"code": card.code})

    assert after.status_code == 403 and "Ask your teacher" in after.content.decode()
    assert "Pia" not in after.content.decode()


def test_a_leavers_school_account_is_refused_as_any_closed_account_is(leaver):
    identity = SchoolIdentity(
        provider="google", email="lee@school.example", email_verified=True, domain_allowed=True
    )

    for linked in (None, leaver.user):
        with pytest.raises(IdentityRefused) as refused:
            identity_account(identity, linked=linked)
        assert refused.value.reason is Refusal.DEACTIVATED
        assert "left" not in f"{refused.value.words.title} {refused.value.words.advice}"


def test_a_leaver_whose_account_stayed_open_is_still_refused_a_school_account(leaver):
    leaver.user.is_active = True
    leaver.user.save(update_fields=["is_active"])
    identity = SchoolIdentity(
        provider="google", email="lee@school.example", email_verified=True, domain_allowed=True
    )

    with pytest.raises(IdentityRefused) as refused:
        identity_account(identity, linked=leaver.user)

    assert refused.value.reason is Refusal.DEACTIVATED


# Assessments -----------------------------------------------------------------------------------


def test_a_leaver_whose_account_stayed_open_cannot_start_an_assessment(class_9c, upstream):
    pupil = leave(make_learner("pia.pupil", "u-pia"), close_account=False)
    client = signed_in(pupil.user)

    mine = page_showing(client, "/me/", "My assessments")
    started = client.post("/me/start/")

    assert "records say you have left." in mine and "/me/start/" not in mine
    assert started.status_code == 200 and LEFT_PAGE in started.content.decode()
    assert "Back to my assessments" in started.content.decode()
    assert not AssessmentAttempt.objects.filter(learner=pupil).exists()


# What staff cannot do for a leaver -------------------------------------------------------------


def test_a_leaver_is_not_offered_to_a_class_and_adding_them_is_refused(admin, leaver):
    group = make_group("10A")
    client = signed_in(admin)

    found = page_showing(
        client, f"/classes/{group.pk}/", "No learner outside this group", data={"q": "lee"}
    )
    added = client.post(f"/classes/{group.pk}/learners/", {"learners": [leaver.pk]})
    page = page_showing(client, f"/classes/{group.pk}/", "Nobody was added")

    assert "lee.leaver" not in found
    assert added.status_code == 302
    assert "Lee Pupil has left the school, and a learner who left joins no class." in page
    assert not group.memberships.exists()


def test_printing_a_leavers_card_is_refused_with_the_reason(admin, class_9c):
    pupil = make_learner("pia.pupil", "u-pia")
    put_in_group(class_9c, pupil)
    pupil.left_at = LEFT_ON  # still in her class: printing her card is refused all the same
    pupil.save(update_fields=["left_at"])
    client = signed_in(admin)

    single = client.get(f"/learners/{pupil.pk}/card/")
    page = page_showing(client, f"/learners/{pupil.pk}/", "a learner who left has no sign-in card")
    whole_class = page_showing(client, f"/classes/{class_9c.pk}/cards/", "Print")

    assert single.status_code == 302 and single.url == f"/learners/{pupil.pk}/"
    assert "Pia Pupil left the school on 22 July 2026" in page
    assert 'class="sign-in-card"' not in whole_class and "Pia" not in whole_class
