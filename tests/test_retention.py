"""Records kept only as long as the partner says, and longer under a safeguarding hold."""

import io
from datetime import date, datetime, timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.utils import timezone

from accounts.models import StaffRole
from assessments.models import AssessmentAttempt, AssessmentResult, AttemptAnswer
from audit.models import AuditEvent
from dashboard.models import CohortResult
from followups.models import FollowUp
from learners.models import Learner
from privacy.holds import HoldLiftRefused, records_hold_lift, records_hold_place
from privacy.models import RecordsHold
from privacy.retention import records_sweep
from privacy.services import ErasureAlertWaiting, learner_erase
from safeguarding.models import Alert
from schools.models import PartnerSettings
from tests.factories import (
    SLEEP,
    completed,
    flagged,
    make_attempt,
    make_group,
    make_result,
    make_staff,
    put_in_group,
    signed_in,
)
from tests.journeys import page_showing

State = AssessmentAttempt.State
Action = AuditEvent.Action
NOTHING = {"expired": 0, "held": 0, "deferred": 0}
CASE_CLOSED = "Referral closed, no further action"


def years_from(moment: datetime, years: int, *, days: int = 0) -> datetime:
    """Return the same moment some years later (earlier if negative), then `days` more."""
    return moment.replace(year=moment.year + years) + timedelta(days=days)


def last_active(learner: Learner, at: datetime) -> AssessmentAttempt:
    """Give the learner a history that ends at `at`: registered, signed in, answered, sent."""
    attempt = make_attempt(learner)
    AttemptAnswer.objects.create(attempt=attempt, question_id="q-sleep", answer_id="q-sleep-a1")
    make_result(attempt)
    AttemptAnswer.objects.filter(attempt=attempt).update(saved_at=at)
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(
        offered_at=at, started_at=at, last_saved_at=at, submitted_at=at, completed_at=at
    )
    Learner.objects.filter(pk=learner.pk).update(registered_at=at)
    User.objects.filter(pk=learner.user_id).update(last_login=at)
    return attempt


def is_erased(learner: Learner) -> bool:
    learner.refresh_from_db()
    return learner.status == Learner.Status.ERASED


@pytest.fixture
def pupil(learner) -> Learner:
    """The learner, 15 today: a safeguarding concern holds their records for ten years."""
    today = timezone.localdate()
    Learner.objects.filter(pk=learner.pk).update(dob=today.replace(year=today.year - 15))
    learner.refresh_from_db()
    return learner


@pytest.fixture
def birthday_25(pupil) -> datetime:
    """Noon on the pupil's 25th birthday."""
    day = pupil.dob.replace(year=pupil.dob.year + 25)
    return timezone.make_aware(datetime(day.year, day.month, day.day, 12))


def raise_alert(learner: Learner, *, attempt=None, at: datetime | None = None, **fields) -> Alert:
    at = at or timezone.now()
    return Alert.objects.create(
        kind=fields.pop("kind", Alert.Kind.RESULT),
        reason=fields.pop("reason", Alert.Reason.PRIORITY),
        learner=learner,
        attempt=attempt,
        values=[{"field": "needs_help", "value": "Yes - priority"}],
        raised_at=at,
        escalate_at=at + timedelta(minutes=30),
        **fields,
    )


# The rule: erased after the retention period ------------------------------------------------------
#
# Marked `backend`: the last activity is Greatest() of several times, and SQLite's MAX() of
# several values is empty if any one is (privacy.selectors.with_last_activity).


@pytest.mark.backend
def test_a_learner_gone_longer_than_the_retention_period_is_erased_and_audited(learner):
    last_active(learner, years_from(timezone.now(), -3, days=-1))

    assert records_sweep() == {**NOTHING, "expired": 1}

    assert is_erased(learner)
    assert (learner.first_name, learner.dob, learner.username) == ("", None, f"erased-{learner.pk}")
    assert not AttemptAnswer.objects.filter(attempt__learner=learner).exists()
    result = AssessmentResult.objects.get(attempt__learner=learner)
    assert (result.trait_title, result.trait_copy, result.trait_tips_html) == ("", "", "")
    event = AuditEvent.objects.get(action=Action.RECORDS_EXPIRED)
    assert (event.actor, event.actor_username, event.learner) == (None, "", learner)
    assert event.detail["retention_years"] == 3
    assert not AuditEvent.objects.filter(action=Action.LEARNER_ERASED).exists()


@pytest.mark.backend
def test_the_anonymous_counts_survive_the_sweep(learner, other_learner):
    Learner.objects.update(registered_at=years_from(timezone.now(), -6))
    completed(learner, "2020-09-10", risk="HIGH", score="40")
    completed(other_learner, "2020-10-10", risk="LOW", score="70")
    last_active(other_learner, timezone.now())
    before = sorted(CohortResult.objects.values_list("learner_id", "level", "completed_at"))

    records_sweep()

    assert is_erased(learner) and not is_erased(other_learner)
    assert sorted(CohortResult.objects.values_list("learner_id", "level", "completed_at")) == before
    result = AssessmentResult.objects.get(attempt__learner=learner)
    assert (result.risk_level, result.loa_score) == ("HIGH", Decimal("40"))
    assert Learner.objects.count() == 2


@pytest.mark.backend
def test_a_learner_is_kept_on_the_last_day_of_the_period(learner):
    now = timezone.now()
    last_active(learner, years_from(now, -3, days=1))

    assert records_sweep(now=now) == NOTHING
    assert not is_erased(learner)


@pytest.mark.parametrize(
    "activity",
    [
        "registered_at",
        "last_login",
        "answer saved_at",
        "offered_at",
        "started_at",
        "last_saved_at",
        "submitted_at",
        "completed_at",
    ],
)
@pytest.mark.backend
def test_any_recent_activity_keeps_the_learner(learner, activity):
    now = timezone.now()
    attempt = last_active(learner, years_from(now, -5))
    recent = years_from(now, -1)
    if activity == "registered_at":
        Learner.objects.filter(pk=learner.pk).update(registered_at=recent)
    elif activity == "last_login":
        User.objects.filter(pk=learner.user_id).update(last_login=recent)
    elif activity == "answer saved_at":
        AttemptAnswer.objects.filter(attempt=attempt).update(saved_at=recent)
    else:
        AssessmentAttempt.objects.filter(pk=attempt.pk).update(**{activity: recent})

    assert records_sweep(now=now) == NOTHING
    assert not is_erased(learner)


@pytest.mark.backend
def test_the_partners_retention_period_decides(learner, other_learner):
    PartnerSettings.current()
    PartnerSettings.objects.update(retention_years=5)
    now = timezone.now()
    last_active(learner, years_from(now, -6))
    last_active(other_learner, years_from(now, -4))

    assert records_sweep(now=now)["expired"] == 1

    assert is_erased(learner) and not is_erased(other_learner)
    assert AuditEvent.objects.get(action=Action.RECORDS_EXPIRED).detail["retention_years"] == 5


@pytest.mark.backend
def test_sweeping_again_erases_nobody_twice(learner):
    last_active(learner, years_from(timezone.now(), -4))

    assert records_sweep()["expired"] == 1
    assert records_sweep() == NOTHING
    assert AuditEvent.objects.filter(action=Action.RECORDS_EXPIRED).count() == 1


@pytest.mark.backend
def test_a_submission_in_flight_puts_the_erasure_off_to_the_next_sweep(learner):
    attempt = last_active(learner, years_from(timezone.now(), -4))
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(state=State.SUBMITTING)

    assert records_sweep() == {**NOTHING, "deferred": 1}
    assert not is_erased(learner)
    assert not AuditEvent.objects.filter(action=Action.RECORDS_EXPIRED).exists()

    AssessmentAttempt.objects.filter(pk=attempt.pk).update(state=State.COMPLETED)
    assert records_sweep()["expired"] == 1


@pytest.mark.backend
def test_the_command_sweeps_once_and_says_what_it_did(learner):
    out = io.StringIO()
    call_command("sweep_retention", stdout=out)
    assert out.getvalue().strip() == "Nothing to do."

    last_active(learner, years_from(timezone.now(), -4))
    call_command("sweep_retention", stdout=out)

    assert "Retention: 1 learners' records erased, 0 held" in out.getvalue()
    assert is_erased(learner)


# The safeguarding hold -----------------------------------------------------------------------


def test_a_routine_follow_up_holds_the_records_only_while_it_is_open(pupil):
    item = flagged(pupil, SLEEP)

    assert records_sweep(now=years_from(timezone.now(), 5)) == {**NOTHING, "held": 1}
    assert not is_erased(pupil)

    FollowUp.objects.filter(pk=item.pk).update(
        status=FollowUp.Status.RESOLVED, resolved_at=timezone.now()
    )
    assert records_sweep(now=years_from(timezone.now(), 5))["expired"] == 1
    assert is_erased(pupil)
    assert not FollowUp.objects.filter(learner=pupil).exists()


@pytest.mark.parametrize("about", ["a result", "the learner"])
def test_a_safeguarding_alert_holds_the_records_until_the_25th_birthday(pupil, birthday_25, about):
    attempt = last_active(pupil, timezone.now())
    if about == "a result":
        alert = raise_alert(None, attempt=attempt)
    else:
        alert = raise_alert(pupil, kind=Alert.Kind.ASKED, reason=Alert.Reason.ASKED)

    assert records_sweep(now=years_from(timezone.now(), 9))["held"] == 1
    # Past the birthday, still kept while no lead has acknowledged the alert.
    assert records_sweep(now=birthday_25)["held"] == 1
    Alert.objects.filter(pk=alert.pk).update(acknowledged_at=timezone.now())
    assert records_sweep(now=birthday_25)["expired"] == 1

    alert.refresh_from_db()
    assert (alert.learner, alert.attempt, alert.values) == (None, None, [])


def test_a_test_alert_holds_nothing(pupil):
    last_active(pupil, years_from(timezone.now(), -4))
    raise_alert(None, kind=Alert.Kind.TEST, reason=Alert.Reason.TEST, test_recipient=pupil.user)

    assert records_sweep()["expired"] == 1


def test_a_hold_staff_place_keeps_the_records_past_the_25th_birthday(pupil, birthday_25, staff):
    last_active(pupil, years_from(timezone.now(), -4))

    assert records_hold_place(learner=pupil, placed_by=staff, reason="Police enquiry")

    assert records_sweep() == {**NOTHING, "held": 1}
    assert records_sweep(now=years_from(birthday_25, 10))["held"] == 1
    assert not is_erased(pupil)


def test_a_lifted_hold_no_longer_keeps_the_records(pupil, staff):
    last_active(pupil, years_from(timezone.now(), -4))
    records_hold_place(learner=pupil, placed_by=staff)

    assert records_hold_lift(learner=pupil, lifted_by=staff, reason=CASE_CLOSED)

    assert records_sweep()["expired"] == 1
    assert not RecordsHold.objects.exists()


def test_lifting_a_placed_hold_leaves_the_automatic_one_then_a_second_lift_ends_it(pupil, staff):
    flagged(pupil, SLEEP)
    later = years_from(timezone.now(), 4)
    records_hold_place(learner=pupil, placed_by=staff)

    records_hold_lift(learner=pupil, lifted_by=staff, reason=CASE_CLOSED)
    assert records_sweep(now=later)["held"] == 1

    records_hold_lift(learner=pupil, lifted_by=staff, reason=CASE_CLOSED)
    assert records_sweep(now=later)["expired"] == 1


def test_a_concern_raised_after_a_lift_holds_the_records_again(pupil, other_learner, staff):
    Learner.objects.update(dob=pupil.dob)
    attempt = last_active(pupil, timezone.now())
    raise_alert(pupil, attempt=attempt)
    flagged(other_learner, SLEEP)
    records_hold_lift(learner=pupil, lifted_by=staff, reason=CASE_CLOSED)
    later = years_from(timezone.now(), 4)
    assert records_hold_lift(learner=other_learner, lifted_by=staff, reason=CASE_CLOSED)

    raise_alert(pupil, at=timezone.now() + timedelta(seconds=1))
    flagged(other_learner, SLEEP)

    assert records_sweep(now=later) == {**NOTHING, "held": 2}


def test_there_is_nothing_to_lift_or_to_place_twice(pupil, staff):
    assert not records_hold_lift(learner=pupil, lifted_by=staff, reason=CASE_CLOSED)
    assert records_hold_place(learner=pupil, placed_by=staff)
    assert not records_hold_place(learner=pupil, placed_by=staff, reason="again")

    assert AuditEvent.objects.filter(action=Action.HOLD_PLACED).count() == 1
    assert not AuditEvent.objects.filter(action=Action.HOLD_LIFTED).exists()


def test_placing_and_lifting_are_audited_without_the_reason(pupil, staff):
    records_hold_place(learner=pupil, placed_by=staff, address="192.0.2.7", reason="Referral")
    records_hold_lift(learner=pupil, lifted_by=staff, address="192.0.2.7", reason=CASE_CLOSED)

    placed = AuditEvent.objects.get(action=Action.HOLD_PLACED)
    lifted = AuditEvent.objects.get(action=Action.HOLD_LIFTED)
    assert (placed.actor, placed.learner, placed.ip_address) == (staff, pupil, "192.0.2.7")
    assert placed.detail == {"with_reason": True}
    assert (lifted.actor, lifted.learner) == (staff, pupil)
    assert lifted.detail == {"hold": "placed", "with_reason": True}
    assert "Referral" not in str(placed.detail) + str(lifted.detail)


# The pages -------------------------------------------------------------------------------------


@pytest.fixture
def school(pupil) -> dict[str, User]:
    """The pupil's class and year group, their teacher and head of year, an admin and a DSL."""
    group, year = make_group("10A"), make_group("Year 10")
    put_in_group(group, pupil)
    put_in_group(year, pupil)
    return {
        "admin": make_staff("ada.admin", role=StaffRole.ADMIN),
        "dsl": make_staff("dee.dsl", role=StaffRole.DSL),
        "teacher": make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[group]),
        "head_of_year": make_staff("hugo.hoy", role=StaffRole.HEAD_OF_YEAR, groups=[year]),
    }


@pytest.mark.parametrize("person", ["admin", "dsl"])
def test_whole_school_staff_place_a_hold_with_a_reason(school, pupil, person):
    client = signed_in(school[person])
    hold_url = f"/learners/{pupil.pk}/hold/"
    assert "Place the hold" in client.get(hold_url).content.decode()

    response = client.post(hold_url, {"place": "yes", "reason": "Referral to children's services"})

    assert response.status_code == 302 and response.url == f"/learners/{pupil.pk}/"
    page = client.get(response.url).content.decode()
    assert "Held until a member of staff lifts the hold." in page
    assert f"Placed by {school[person].username} on" in page
    # The reason says something about a child: only staff who read results see it.
    assert ("Referral to children&#x27;s services" in page) == (person == "dsl")
    assert RecordsHold.objects.get(learner=pupil).placed_by == school[person]


def test_a_safeguarding_lead_lifts_a_hold_only_saying_why(school, pupil):
    records_hold_place(learner=pupil, placed_by=school["admin"], reason="Referral")
    client = signed_in(school["dsl"])
    hold_url = f"/learners/{pupil.pk}/hold/"

    response = client.post(hold_url, {"lift": "yes", "lift-reason": "  "})

    assert response.status_code == 200
    assert "Say why the hold can be lifted." in response.content.decode()
    with pytest.raises(HoldLiftRefused) as refused:
        records_hold_lift(learner=pupil, lifted_by=school["dsl"], reason=" \n")
    assert refused.value.code == HoldLiftRefused.NO_REASON
    assert RecordsHold.objects.get(learner=pupil).in_force

    response = client.post(hold_url, {"lift": "yes", "lift-reason": CASE_CLOSED}, follow=True)

    assert "The hold is lifted." in response.content.decode()
    assert "Not held." in response.content.decode()
    assert RecordsHold.objects.get(learner=pupil).lift_reason == CASE_CLOSED
    holds = AuditEvent.objects.filter(action__in=[Action.HOLD_PLACED, Action.HOLD_LIFTED])
    assert [e.action for e in holds.order_by("id")] == [Action.HOLD_PLACED, Action.HOLD_LIFTED]


def test_a_partner_admin_cannot_lift_a_hold_even_their_own(school, pupil):
    records_hold_place(learner=pupil, placed_by=school["admin"], reason="Referral")
    client = signed_in(school["admin"])
    hold_url = f"/learners/{pupil.pk}/hold/"
    page = client.get(hold_url).content.decode()
    assert "Only a safeguarding lead can lift a hold, saying why." in page
    assert 'name="lift"' not in page

    response = client.post(hold_url, {"lift": "yes", "lift-reason": CASE_CLOSED})

    assert response.status_code == 403
    assert "Only a safeguarding lead can lift a safeguarding hold." in response.content.decode()
    assert RecordsHold.objects.get(learner=pupil).in_force
    assert not AuditEvent.objects.filter(action=Action.HOLD_LIFTED).exists()
    with pytest.raises(HoldLiftRefused):
        records_hold_lift(learner=pupil, lifted_by=school["admin"], reason=CASE_CLOSED)


@pytest.mark.parametrize("person", ["teacher", "head_of_year"])
def test_staff_of_the_learners_groups_can_neither_see_nor_change_the_hold(school, pupil, person):
    client = signed_in(school[person])

    assert client.get(f"/learners/{pupil.pk}/hold/").status_code == 404
    assert client.post(f"/learners/{pupil.pk}/hold/", {"place": "yes"}).status_code == 404
    record = page_showing(client, f"/learners/{pupil.pk}/", f"<h1>{pupil.display_name}</h1>")
    assert "Safeguarding hold" not in record
    assert not RecordsHold.objects.exists()
    assert not AuditEvent.objects.filter(action=Action.HOLD_PLACED).exists()


def test_learners_get_not_found_and_nothing_changes(pupil, other_learner, staff):
    records_hold_place(learner=pupil, placed_by=staff)

    for user in (pupil.user, other_learner.user):
        response = signed_in(user).post(f"/learners/{pupil.pk}/hold/", {"lift": "yes"})
        assert response.status_code == 404

    assert RecordsHold.objects.get(learner=pupil).in_force


def test_a_post_without_a_button_changes_nothing(school, pupil):
    response = signed_in(school["dsl"]).post(f"/learners/{pupil.pk}/hold/", {"reason": "x"})

    assert response.status_code == 200
    assert "<h1>Safeguarding hold on " in response.content.decode()  # the form again
    assert not RecordsHold.objects.exists() and not AuditEvent.objects.exists()


def test_a_reason_too_long_is_refused_with_the_form_again(school, pupil):
    response = signed_in(school["dsl"]).post(
        f"/learners/{pupil.pk}/hold/", {"place": "yes", "reason": "x" * 501}
    )

    assert response.status_code == 200
    assert "Keep the reason under 500 characters" in response.content.decode()
    assert not RecordsHold.objects.exists()


def test_the_record_says_until_when_and_why_the_records_are_held(school, pupil, birthday_25):
    client = signed_in(school["dsl"])
    page = client.get(f"/learners/{pupil.pk}/").content.decode()
    kept_until = date(timezone.localdate().year + 3, *timezone.localdate().timetuple()[1:3])
    assert "Not held." in page
    assert f"kept until {kept_until:%-d %B %Y}, 3 years after their last activity" in page

    flagged(pupil, SLEEP)
    page = client.get(f"/learners/{pupil.pk}/").content.decode()
    assert (
        "Held while a follow-up about them is open; then kept for 3 years after it is resolved."
    ) in page
    assert "25th birthday" not in page

    raise_alert(pupil)
    page = client.get(f"/learners/{pupil.pk}/").content.decode()
    assert (
        f"Held until {birthday_25:%-d %B %Y}, their 25th birthday, because a safeguarding alert "
        "was raised about them."
    ) in page
    assert f'href="/learners/{pupil.pk}/hold/"' in page


def test_a_partner_admin_cannot_erase_held_records_and_nothing_is_lost(school, pupil):
    attempt = last_active(pupil, timezone.now())
    records_hold_place(learner=pupil, placed_by=school["dsl"], reason="Referral")
    client = signed_in(school["admin"])
    page = client.get(f"/learners/{pupil.pk}/erase/").content.decode()
    assert "These records are under a safeguarding hold" in page
    assert "Only a safeguarding lead can lift the hold" in page
    assert 'name="erase"' not in page and 'name="lift"' not in page

    response = client.post(f"/learners/{pupil.pk}/erase/", {"erase": "yes"})

    assert response.status_code == 409
    assert "Nothing was erased: these records are under a safeguarding hold. Only a " in (
        response.content.decode()
    )
    assert not is_erased(pupil) and pupil.first_name == "Lee"
    assert AttemptAnswer.objects.filter(attempt=attempt).exists()
    assert RecordsHold.objects.get(learner=pupil).in_force
    assert not AuditEvent.objects.filter(action=Action.LEARNER_ERASED).exists()


def test_a_lead_lifts_the_hold_saying_why_then_erases_keeping_only_the_alerts_timings(
    school, pupil
):
    attempt = last_active(pupil, timezone.now())
    alert = raise_alert(pupil, attempt=attempt, acknowledged_at=timezone.now())
    records_hold_place(learner=pupil, placed_by=school["admin"], reason="Referral")
    client = signed_in(school["dsl"])
    erase_url = f"/learners/{pupil.pk}/erase/"
    page = client.get(erase_url).content.decode()
    assert "These records are under a safeguarding hold" in page
    assert 'name="lift"' in page and 'name="erase"' not in page

    response = client.post(erase_url, {"erase": "yes"})
    assert response.status_code == 409
    assert "Lift the hold first, saying why, then erase them." in response.content.decode()
    response = client.post(erase_url, {"lift": "yes", "lift-reason": ""})
    assert response.status_code == 200
    assert "Say why the hold can be lifted." in response.content.decode()
    assert not is_erased(pupil) and RecordsHold.objects.get(learner=pupil).in_force

    response = client.post(erase_url, {"lift": "yes", "lift-reason": CASE_CLOSED}, follow=True)

    assert "The hold is lifted." in response.content.decode()
    assert 'name="erase"' in response.content.decode()
    # Both the hold staff placed and the alert's: one event each, the reason kept off the trail.
    lifts = AuditEvent.objects.filter(action=Action.HOLD_LIFTED).order_by("id")
    assert [(e.actor, e.learner, e.detail["hold"]) for e in lifts] == [
        (school["dsl"], pupil, "placed"),
        (school["dsl"], pupil, "automatic"),
    ]
    assert all(e.detail["with_reason"] and CASE_CLOSED not in str(e.detail) for e in lifts)

    client.post(erase_url, {"erase": "yes"})

    assert is_erased(pupil)
    alert.refresh_from_db()
    assert (alert.learner, alert.attempt, alert.values) == (None, None, [])
    assert alert.raised_at is not None and alert.escalate_at is not None
    assert not RecordsHold.objects.exists()


@pytest.mark.parametrize("person", ["admin", "dsl"])
def test_an_unacknowledged_alert_stops_everyone_erasing(school, pupil, person):
    attempt = last_active(pupil, timezone.now())
    raise_alert(pupil, attempt=attempt)
    # Even with the hold lifted: the alert was raised before, and nobody has read it yet.
    records_hold_lift(learner=pupil, lifted_by=school["dsl"], reason=CASE_CLOSED)
    client = signed_in(school[person])
    page = client.get(f"/learners/{pupil.pk}/erase/").content.decode()
    assert "These records cannot be erased yet" in page and 'name="erase"' not in page

    response = client.post(f"/learners/{pupil.pk}/erase/", {"erase": "yes"})

    assert response.status_code == 409
    expected = {
        "dsl": "a safeguarding alert about this learner has not been acknowledged. A "
        "safeguarding lead must acknowledge it first.",
        # A partner admin who does not read results is not told that a child worried someone.
        "admin": "a safeguarding matter about this learner is waiting for the safeguarding "
        "leads. Ask one of them.",
    }[person]
    assert f"Nothing was erased: {expected}" in response.content.decode()
    assert not is_erased(pupil) and AttemptAnswer.objects.filter(attempt=attempt).exists()
    with pytest.raises(ErasureAlertWaiting):
        learner_erase(learner=pupil, erased_by=school["dsl"])


def test_the_export_holds_the_hold_staff_placed(school, pupil):
    records_hold_place(learner=pupil, placed_by=school["dsl"], reason="Referral")

    export = signed_in(school["dsl"]).get(f"/learners/{pupil.pk}/export/").json()

    assert export["records_hold"]["reason"] == "Referral"
    assert export["records_hold"]["placed_by"] == "dee.dsl"


# The setting -----------------------------------------------------------------------------------


def test_admins_set_the_retention_period_on_the_settings_page_audited(school):
    client = signed_in(school["admin"])
    page = client.get("/settings/").content.decode()
    assert 'name="retention_years"' in page and "How long records are kept" in page

    client.post("/settings/", {"retention_years": "7"})

    assert PartnerSettings.current().retention_years == 7
    event = AuditEvent.objects.get(action=Action.SETTINGS_CHANGED)
    assert event.detail == {"retention_years": 7}


@pytest.mark.parametrize("years", ["0", "26", "three"])
def test_a_retention_period_outside_1_to_25_years_is_refused(school, years):
    response = signed_in(school["admin"]).post("/settings/", {"retention_years": years})

    assert response.status_code == 200 and "error-summary" in response.content.decode()
    assert PartnerSettings.current().retention_years == 3


def test_a_settings_form_without_the_period_keeps_it(school):
    PartnerSettings.current()
    PartnerSettings.objects.update(retention_years=9)

    signed_in(school["admin"]).post("/settings/", {"teachers_see_results": "on"})

    assert PartnerSettings.current().retention_years == 9
