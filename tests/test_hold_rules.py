"""The long hold only for child protection: alerts hold to the 25th birthday, follow-ups while open.

Issue 32: a routine follow-up (a result needing help, no alert) held a child's records until
they were 25, saying so without a space ("their 25th birthday,because").
"""

from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from accounts.models import StaffRole
from assessments.models import AssessmentAttempt, AttemptAnswer
from followups.models import FollowUp
from learners.models import Learner
from privacy.hold_words import automatic_hold_sentence, under_placed_hold_sentence
from privacy.holds import records_hold_lift, records_hold_place
from privacy.retention import records_sweep
from privacy.selectors import Hold, hold_of, kept_until
from privacy.services import ErasureHeld, learner_erase
from safeguarding.models import Alert
from tests.factories import SLEEP, flagged, make_learner, make_staff, signed_in

NOTHING = {"expired": 0, "held": 0, "deferred": 0}
OPEN_FOLLOW_UP = (
    "Held while a follow-up about them is open; then kept for 3 years after it is resolved."
)
OPEN_FOLLOW_UP_NOT_WHY = (
    "Held while staff are following something up about them; then kept for 3 years after that."
)
PLACED = "Held until a member of staff lifts the hold."


def years_from(moment: datetime, years: int, *, days: int = 0) -> datetime:
    """Return the same moment some years later (earlier if negative), then `days` more."""
    return moment.replace(year=moment.year + years) + timedelta(days=days)


def is_erased(learner: Learner) -> bool:
    learner.refresh_from_db()
    return learner.status == Learner.Status.ERASED


def quiet_since(learner: Learner, at: datetime) -> None:
    """Move everything the learner did, their follow-ups' opening included, back to `at`."""
    AssessmentAttempt.objects.filter(learner=learner).update(
        offered_at=at, started_at=at, last_saved_at=at, submitted_at=at, completed_at=at
    )
    AttemptAnswer.objects.filter(attempt__learner=learner).update(saved_at=at)
    FollowUp.objects.filter(learner=learner).update(created_at=at)
    Learner.objects.filter(pk=learner.pk).update(registered_at=at)
    User.objects.filter(pk=learner.user_id).update(last_login=at)


def resolve(item: FollowUp, at: datetime) -> None:
    FollowUp.objects.filter(pk=item.pk).update(status=FollowUp.Status.RESOLVED, resolved_at=at)


def raise_alert(learner: Learner, *, kind=Alert.Kind.RESULT, reason=Alert.Reason.PRIORITY):
    """Raise an alert about the learner, acknowledged at once (erasure waits for no lead)."""
    now = timezone.now()
    return Alert.objects.create(
        kind=kind,
        reason=reason,
        learner=learner,
        values=[{"field": "needs_help", "value": "Yes - priority"}],
        raised_at=now,
        escalate_at=now + timedelta(minutes=30),
        acknowledged_at=now,
    )


@pytest.fixture
def pupil(learner) -> Learner:
    """The learner, 15 today: an alert about them holds their records for ten years."""
    today = timezone.localdate()
    Learner.objects.filter(pk=learner.pk).update(dob=today.replace(year=today.year - 15))
    learner.refresh_from_db()
    return learner


@pytest.fixture
def birthday_25(pupil) -> datetime:
    """Noon on the pupil's 25th birthday."""
    day = pupil.dob.replace(year=pupil.dob.year + 25)
    return timezone.make_aware(datetime(day.year, day.month, day.day, 12))


def birthday_words(birthday: datetime) -> str:
    return f"Held until {birthday:%-d %B %Y}, their 25th birthday,"


# The rule --------------------------------------------------------------------------------------


def test_an_open_routine_follow_up_holds_while_open_not_until_the_25th_birthday(pupil, birthday_25):
    flagged(pupil, SLEEP)

    hold = hold_of(pupil, today=timezone.localdate())

    assert hold.held and hold.open_follow_up
    assert not hold.alert and hold.until is None
    # Open, it holds past the 25th birthday too: someone is still working on it.
    assert records_sweep(now=years_from(birthday_25, 1)) == {**NOTHING, "held": 1}
    assert not is_erased(pupil)


@pytest.mark.backend
def test_a_resolved_routine_follow_up_holds_nothing_and_the_period_runs_from_resolving(pupil):
    item = flagged(pupil, SLEEP)
    quiet_since(pupil, years_from(timezone.now(), -5))
    resolved_at = years_from(timezone.now(), -1)
    resolve(item, resolved_at)

    hold = hold_of(pupil, today=timezone.localdate())

    assert not hold.held and not hold.open_follow_up
    assert kept_until(pupil) == years_from(timezone.localtime(resolved_at), 3).date()
    assert records_sweep() == NOTHING
    assert records_sweep(now=years_from(resolved_at, 3, days=1))["expired"] == 1
    assert is_erased(pupil)


@pytest.mark.backend
def test_the_sweep_erases_a_follow_up_resolved_long_ago_and_keeps_one_resolved_recently(db):
    long_ago, recently = make_learner("lon.ago", "u-lon"), make_learner("rec.ent", "u-rec")
    five_years_ago = years_from(timezone.now(), -5)
    for learner, resolved_years_ago in ((long_ago, 4), (recently, 1)):
        item = flagged(learner, SLEEP)
        quiet_since(learner, five_years_ago)
        resolve(item, years_from(timezone.now(), -resolved_years_ago))

    assert records_sweep() == {**NOTHING, "expired": 1}

    assert is_erased(long_ago)
    assert not is_erased(recently)


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        (Alert.Kind.RESULT, Alert.Reason.PRIORITY),
        (Alert.Kind.RESULT, Alert.Reason.UNRECOGNISED),
        (Alert.Kind.ASKED, Alert.Reason.ASKED),
    ],
)
def test_a_safeguarding_alert_holds_until_the_25th_birthday(pupil, birthday_25, kind, reason):
    raise_alert(pupil, kind=kind, reason=reason)

    hold = hold_of(pupil, today=timezone.localdate())

    assert hold.held and hold.alert and hold.until == birthday_25.date()
    assert records_sweep(now=birthday_25 - timedelta(days=1)) == {**NOTHING, "held": 1}
    assert records_sweep(now=birthday_25)["expired"] == 1


def test_a_test_alert_holds_nothing(pupil):
    raise_alert(pupil, kind=Alert.Kind.TEST, reason=Alert.Reason.TEST)

    hold = hold_of(pupil, today=timezone.localdate())

    assert not hold.held and not hold.alert


def test_a_priority_follow_up_whose_alert_is_gone_still_holds_until_the_25th(pupil, birthday_25):
    item = flagged(pupil, SLEEP)
    FollowUp.objects.filter(pk=item.pk).update(priority=True)
    assert not Alert.objects.exists()

    hold = hold_of(pupil, today=timezone.localdate())

    assert hold.alert and hold.until == birthday_25.date()


def test_a_hold_staff_placed_keeps_the_records_until_lifted(pupil, birthday_25, staff):
    records_hold_place(learner=pupil, placed_by=staff)

    assert records_sweep(now=years_from(birthday_25, 10)) == {**NOTHING, "held": 1}
    records_hold_lift(learner=pupil, lifted_by=staff, reason="Case closed")
    assert records_sweep(now=years_from(birthday_25, 10))["expired"] == 1


def test_staff_cannot_erase_while_an_open_routine_follow_up_holds(pupil, staff):
    flagged(pupil, SLEEP)

    with pytest.raises(ErasureHeld):
        learner_erase(learner=pupil, erased_by=staff)

    assert not is_erased(pupil)
    assert FollowUp.objects.filter(learner=pupil).exists()


# The sentence ----------------------------------------------------------------------------------


@pytest.fixture
def people(pupil) -> dict[str, User]:
    """A safeguarding lead (reads results) and an admin (by default, reads none)."""
    return {
        "dsl": make_staff("dee.dsl", role=StaffRole.DSL),
        "admin": make_staff("ada.admin", role=StaffRole.ADMIN),
    }


PAGES = ["/learners/{pk}/", "/learners/{pk}/hold/", "/learners/{pk}/erase/"]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_says_an_open_follow_up_holds_while_open(people, pupil, page):
    flagged(pupil, SLEEP)
    path = page.format(pk=pupil.pk)

    as_lead = signed_in(people["dsl"]).get(path)
    as_admin = signed_in(people["admin"]).get(path)

    assert as_lead.status_code == 200 and OPEN_FOLLOW_UP in as_lead.content.decode()
    assert as_admin.status_code == 200 and OPEN_FOLLOW_UP_NOT_WHY in as_admin.content.decode()
    assert "their 25th birthday, because" not in as_lead.content.decode()
    assert "follow-up about them" not in as_admin.content.decode()


@pytest.mark.parametrize("page", PAGES)
def test_every_page_says_an_alert_holds_until_the_25th_birthday(people, pupil, birthday_25, page):
    flagged(pupil, SLEEP)
    raise_alert(pupil)
    path = page.format(pk=pupil.pk)

    as_lead = signed_in(people["dsl"]).get(path)
    as_admin = signed_in(people["admin"]).get(path)

    assert as_lead.status_code == 200
    assert (
        f"{birthday_words(birthday_25)} because a safeguarding alert was raised about them."
    ) in as_lead.content.decode()
    assert as_admin.status_code == 200
    assert (
        f"{birthday_words(birthday_25)} because of a safeguarding matter."
    ) in as_admin.content.decode()
    assert OPEN_FOLLOW_UP not in as_lead.content.decode()


@pytest.mark.parametrize("page", PAGES)
def test_every_page_says_a_placed_hold_lasts_until_lifted(people, pupil, birthday_25, page):
    flagged(pupil, SLEEP)
    records_hold_place(learner=pupil, placed_by=people["dsl"])
    path = page.format(pk=pupil.pk)

    html = signed_in(people["dsl"]).get(path).content.decode()

    assert f"{PLACED}</strong> Placed by dee.dsl on " in html
    assert "Without it, a follow-up would hold them while it is open." in html
    assert "Without it, a safeguarding alert" not in html


def test_an_adult_with_no_alert_is_not_told_of_a_hold_that_ended(people, learner):
    Learner.objects.filter(pk=learner.pk).update(dob=timezone.localdate().replace(year=1990))

    html = signed_in(people["dsl"]).get(f"/learners/{learner.pk}/").content.decode()

    assert "Not held." in html
    assert "The safeguarding hold ended" not in html


def test_a_hold_that_ended_on_the_25th_birthday_says_so(people, learner):
    Learner.objects.filter(pk=learner.pk).update(dob=timezone.localdate().replace(year=1990))
    raise_alert(learner)

    html = signed_in(people["dsl"]).get(f"/learners/{learner.pk}/").content.decode()

    assert "Not held." in html
    assert "The safeguarding hold ended on their 25th birthday, " in html


def test_the_sentences_without_a_date_of_birth_and_for_one_year():
    alert_hold = Hold(alert=True, birthday_25=None)
    follow_up_hold = Hold(open_follow_up=True)

    assert automatic_hold_sentence(alert_hold, show_why=True, years=3) == (
        "Held until their 25th birthday (their date of birth is not known), because a "
        "safeguarding alert was raised about them."
    )
    assert under_placed_hold_sentence(alert_hold) == (
        "Without it, a safeguarding alert would hold them until their 25th birthday (their "
        "date of birth is not known)."
    )
    assert automatic_hold_sentence(follow_up_hold, show_why=True, years=1) == (
        "Held while a follow-up about them is open; then kept for 1 year after it is resolved."
    )
    assert automatic_hold_sentence(follow_up_hold, show_why=False, years=1) == (
        "Held while staff are following something up about them; then kept for 1 year after that."
    )


def test_the_hold_page_says_what_lifting_a_placed_hold_leaves(people, pupil):
    flagged(pupil, SLEEP)
    records_hold_place(learner=pupil, placed_by=people["dsl"])
    path = f"/learners/{pupil.pk}/hold/"

    as_lead = signed_in(people["dsl"]).get(path).content.decode()
    as_admin = signed_in(people["admin"]).get(path).content.decode()

    assert "The open follow-up still holds the records while it is open" in as_lead
    assert "The automatic hold stays: lifting that is a separate decision." in as_admin
    assert "follow-up still holds" not in as_admin
