"""Personal data: staff erase a learner locally, or export everything held about them."""

import io
import json
from datetime import date, datetime, timedelta
from decimal import Decimal

import pytest
import responses
from allauth.mfa.models import Authenticator
from allauth.socialaccount.models import SocialAccount
from django.contrib.admin.models import ADDITION, LogEntry
from django.contrib.auth import authenticate
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import transaction
from django.db.transaction import TransactionManagementError
from django.test import Client
from django.utils import timezone

from assessments.content import questions_to_json
from assessments.delivery import attempts_sweep
from assessments.models import AssessmentAttempt, AssessmentResult, AttemptAnswer, FocusArea
from assessments.services import attempts_forget_learner
from audit.models import AuditEvent
from imports.models import ImportJob, ImportRow
from learners.models import Learner, Level
from lessons.models import SignInCard
from lessons.services import learner_card_print
from privacy.holds import records_hold_lift
from privacy.services import ErasureDeferred, learner_data_export, learner_erase
from safeguarding.entries import entry_add_note
from safeguarding.models import Alert, ChronologyEntry
from tests.factories import PASSWORD, make_learner, question

State = AssessmentAttempt.State

API_KEY = "test-partner-api-key-7f3a9c"


def answer_text(assessment_id: int, question: int, choice: int) -> str:
    return f"Choice {choice} to question {question} of assessment {assessment_id}"


def make_attempt(learner: Learner, assessment_id: int, *, state: str) -> AssessmentAttempt:
    """Store an attempt as the services leave it; a completed one has results."""
    now = timezone.now()
    completed = state == State.COMPLETED
    attempt = AssessmentAttempt.objects.create(
        learner=learner,
        assessment_id=assessment_id,
        title=f"Learning habits check {assessment_id}",
        level=Level.SECONDARY,
        version=Decimal("1.1"),
        content=questions_to_json(
            question(
                f"q-{number}",
                "SLEEP & TIREDNESS",
                f"Question {number} of assessment {assessment_id}",
                number,
                copies=[answer_text(assessment_id, number, choice) for choice in (1, 2)],
            )
            for number in (1, 2)
        ),
        session=f"upstream-session-{assessment_id}-d41d8cd9",
        state=state,
        started_at=now,
        last_saved_at=now,
        submitted_at=None if state in (State.IN_PROGRESS, State.AVAILABLE) else now,
        completed_at=now if completed else None,
        state_changed_at=now,
        last_error="" if completed else "The assessment service could not be reached.",
    )
    for number in (1, 2):
        AttemptAnswer.objects.create(
            attempt=attempt, question_id=f"q-{number}", answer_id=f"q-{number}-a2"
        )
    if completed:
        result = AssessmentResult.objects.create(
            attempt=attempt,
            loa_score=Decimal("72.35"),
            risk_level="Moderate",
            trait_title=f"The night owl of assessment {assessment_id}",
            trait_copy="You do your best thinking late.",
            trait_signs_raw="<ul><li>Tired in the morning</li></ul><script>x()</script>",
            trait_signs_html="<ul><li>Tired in the morning</li></ul>",
            trait_tips_raw="<p>Keep a regular bedtime</p>",
            trait_tips_html="<p>Keep a regular bedtime</p>",
            result_description_raw="<p>Sleep affects your learning.</p>",
            result_description_html="<p>Sleep affects your learning.</p>",
        )
        FocusArea.objects.create(
            result=result, name="SLEEP & TIREDNESS", needs_help="yes", questions_count=2
        )
        FocusArea.objects.create(
            result=result, name="EXAM ANXIETY", needs_help="no", questions_count=1, position=1
        )
    return attempt


@pytest.fixture
def learner(learner) -> Learner:
    """The conftest learner, with an email, a completed assessment and one in progress."""
    learner.email = "lee.learner@example.org"
    learner.save()
    make_attempt(learner, 9101, state=State.COMPLETED)
    make_attempt(learner, 9102, state=State.IN_PROGRESS)
    return learner


def personal_details(learner: Learner) -> list[str]:
    """Return what identifies the learner or came from them: erasure must leave none of it."""
    return [
        learner.username,
        learner.first_name,
        learner.display_name,
        learner.email,
        learner.upstream_user_id,
        "2010-05-17",
        "The night owl",
        "best thinking late",
        "Tired in the morning",
        "regular bedtime",
        "Sleep affects your learning",
        "Choice 2 to question",
        "upstream-session-",
    ]


def erase(learner: Learner, staff) -> Learner:
    learner_erase(learner=learner, erased_by=staff)
    learner.refresh_from_db()
    return learner


# Erasing.


def test_erasing_removes_every_personal_field_of_the_learner(learner, staff):
    erase(learner, staff)

    assert learner.username == f"erased-{learner.pk}"
    assert (learner.first_name, learner.last_name, learner.email) == ("", "", "")
    assert learner.dob is None
    assert learner.upstream_user_id is None
    assert learner.status == Learner.Status.ERASED
    assert learner.erased_at is not None
    assert learner.display_name == f"erased-{learner.pk}"


def test_erasing_anonymises_the_sign_in_account_and_makes_it_unusable(learner, staff):
    erase(learner, staff)

    user = learner.user
    user.refresh_from_db()
    assert user.username == f"erased-{learner.pk}"
    assert (user.first_name, user.last_name, user.email) == ("", "", "")
    assert not user.has_usable_password()
    assert not user.is_active
    assert user.last_login is None


def test_erasing_removes_answers_stored_questions_sessions_and_the_free_text_of_results(
    learner, staff
):
    erase(learner, staff)

    assert not AttemptAnswer.objects.filter(attempt__learner=learner).exists()
    for attempt in AssessmentAttempt.objects.filter(learner=learner):
        assert attempt.content == {}
        assert attempt.session == ""
    result = AssessmentResult.objects.get(attempt__learner=learner)
    free_text = [
        "trait_title",
        "trait_copy",
        "trait_signs_raw",
        "trait_signs_html",
        "trait_tips_raw",
        "trait_tips_html",
        "result_description_raw",
        "result_description_html",
    ]
    assert {name: getattr(result, name) for name in free_text} == dict.fromkeys(free_text, "")


def test_erasing_keeps_the_anonymous_record_counts_are_made_of(learner, staff):
    erase(learner, staff)

    assert Learner.objects.filter(level=Level.SECONDARY).count() == 1
    attempts = AssessmentAttempt.objects.filter(learner=learner).order_by("assessment_id")
    assert [(a.assessment_id, a.state) for a in attempts] == [
        (9101, State.COMPLETED),
        (9102, State.IN_PROGRESS),
    ]
    assert all(a.started_at and a.offered_at for a in attempts)
    result = AssessmentResult.objects.get(attempt__learner=learner)
    assert (result.loa_score, result.risk_level) == (Decimal("72.35"), "Moderate")
    assert [(a.name, a.needs_help_flagged) for a in result.focus_areas.all()] == [
        ("SLEEP & TIREDNESS", True),
        ("EXAM ANXIETY", False),
    ]


def test_erasing_leaves_other_learners_alone(learner, other_learner, staff):
    make_attempt(other_learner, 9201, state=State.COMPLETED)

    erase(learner, staff)

    other_learner.refresh_from_db()
    assert other_learner.username == "olive.other" and other_learner.dob == date(2010, 5, 17)
    assert AttemptAnswer.objects.filter(attempt__learner=other_learner).count() == 2
    assert AssessmentResult.objects.get(attempt__learner=other_learner).trait_title


def test_after_erasure_nothing_in_the_database_names_the_learner(learner, staff):
    details = personal_details(learner)
    content_type = ContentType.objects.get_for_model(Learner)
    LogEntry.objects.log_actions(staff.pk, [learner], ADDITION)  # the admin's own history
    assert LogEntry.objects.get(content_type=content_type).object_repr == learner.display_name
    # The row of the bulk-registration file the learner came from.
    job = ImportJob.objects.create(filename="year-10.csv", created_at=timezone.now())
    ImportRow.objects.create(
        job=job,
        row_number=2,
        username=learner.username,
        first_name=learner.first_name,
        last_name=learner.last_name,
        email=learner.email,
        dob=learner.dob,
        state=ImportRow.State.REGISTERED,
        learner=learner,
    )

    erase(learner, staff)

    dump = io.StringIO()
    call_command("dumpdata", stdout=dump)
    found = [detail for detail in details if detail in dump.getvalue()]
    assert not found


def test_erasing_keeps_the_times_of_safeguarding_alerts_but_nothing_that_leads_to_the_learner(
    learner, other_learner, staff
):
    raised = timezone.now() - timedelta(days=2)
    times = {"raised_at": raised, "escalate_at": raised + timedelta(minutes=30)}
    about_result = Alert.objects.create(
        kind=Alert.Kind.RESULT,
        reason=Alert.Reason.PRIORITY,
        learner=learner,
        attempt=AssessmentAttempt.objects.get(assessment_id=9101),
        values=[{"field": "needs_help", "value": "Yes - priority"}],
        acknowledged_at=raised + timedelta(minutes=5),
        **times,
    )
    asked = Alert.objects.create(
        kind=Alert.Kind.ASKED,
        reason=Alert.Reason.ASKED,
        learner=learner,
        acknowledged_at=raised + timedelta(minutes=9),
        about=Alert.About.HOME,
        wanted_contact="Mrs Khan",
        urgent=True,
        category=Alert.Category.FAMILY,
        **times,
    )
    someone_else = Alert.objects.create(
        kind=Alert.Kind.ASKED, reason=Alert.Reason.ASKED, learner=other_learner, **times
    )
    for pupil in (learner, other_learner):
        entry_add_note(learner=pupil, by=staff, text="Spoke with the pupil")
    # Alerts hold the records: a safeguarding lead (staff) lifts the hold before erasing.
    records_hold_lift(learner=learner, lifted_by=staff, reason="No further action")

    erase(learner, staff)

    # The chronology is free text about the child: it goes; someone else's stays.
    assert list(ChronologyEntry.objects.values_list("learner", flat=True)) == [other_learner.pk]
    for alert in (about_result, asked):
        alert.refresh_from_db()
        assert (alert.learner, alert.attempt, alert.values) == (None, None, [])
        assert (alert.raised_at, alert.escalate_at) == (times["raised_at"], times["escalate_at"])
    assert about_result.acknowledged_at == raised + timedelta(minutes=5)
    # What the pupil said when asking, and the lead's category, were about the child.
    assert (asked.about, asked.wanted_contact, asked.urgent, asked.category) == ("", "", False, "")
    assert asked.acknowledged_at == raised + timedelta(minutes=9)
    someone_else.refresh_from_db()
    assert someone_else.learner == other_learner


def test_erasing_deletes_the_learners_sign_in_card(learner, other_learner, staff):
    for pupil in (learner, other_learner):
        learner_card_print(learner=pupil, group_name="10B", printed_by=staff, address=None)
    assert SignInCard.objects.filter(learner=learner).exists()

    erase(learner, staff)

    assert not SignInCard.objects.filter(learner=learner).exists()
    assert SignInCard.objects.filter(learner=other_learner).exists()


def link_school_account(learner: Learner) -> None:
    """The learner's school account linked, and an authenticator app, as allauth stores them."""
    SocialAccount.objects.create(
        user=learner.user,
        provider="google",
        uid="10769150350006150715113082367",
        extra_data={"sub": "10769150350006150715113082367", "email": learner.email,
                    "name": "Lee Pupil", "hd": "school.example"},
    )  # fmt: skip
    Authenticator.objects.create(
        user=learner.user, type=Authenticator.Type.TOTP, data={"secret": "not-a-real-secret"}
    )


def test_erasing_deletes_the_learners_school_account_and_second_factor(
    learner, other_learner, staff
):
    link_school_account(learner)
    SocialAccount.objects.create(user=other_learner.user, provider="google", uid="other")
    assert SocialAccount.objects.filter(user=learner.user).exists()

    erase(learner, staff)

    assert not SocialAccount.objects.filter(user=learner.user).exists()
    assert not Authenticator.objects.filter(user=learner.user).exists()
    assert SocialAccount.objects.filter(user=other_learner.user).exists()


def test_an_erased_learner_can_no_longer_sign_in(learner, staff):
    username = learner.username
    signed_in = Client()
    signed_in.force_login(learner.user)

    erase(learner, staff)

    assert authenticate(username=username, password=PASSWORD) is None
    assert authenticate(username=learner.username, password=PASSWORD) is None
    response = Client().post("/accounts/login/", {"username": username, "password": PASSWORD})
    assert response.status_code == 200  # the form again, not a redirect into the portal
    assert signed_in.get("/me/").url == "/accounts/login/?next=/me/"


def test_after_erasure_the_learner_appears_on_no_staff_page(learner, staff_client, staff):
    details = personal_details(learner)
    erase(learner, staff)

    listing = staff_client.get("/learners/")
    assert b"0 learners" in listing.content
    for search in ["lee", f"erased-{learner.pk}", "Pupil"]:
        assert b"No learners match" in staff_client.get("/learners/", {"q": search}).content
    assert staff_client.get(f"/learners/{learner.pk}/").status_code == 404
    assert staff_client.get(f"/learners/{learner.pk}/attempts/9101/").status_code == 404
    assert staff_client.get(f"/learners/{learner.pk}/export/").status_code == 404
    pages = [listing, staff_client.get("/operations/")]
    assert not [d for d in details for page in pages if d.encode() in page.content]


def test_erasure_stops_a_submission_that_has_not_reached_the_upstream(learner, staff):
    waiting = make_attempt(learner, 9103, state=State.SUBMIT_PENDING)
    awaiting_results = make_attempt(learner, 9104, state=State.SUBMITTED)

    erase(learner, staff)

    for attempt in (waiting, awaiting_results):
        attempt.refresh_from_db()
        assert attempt.state == State.REJECTED
        assert "erased" in attempt.last_error
    with responses.RequestsMock() as upstream:
        assert attempts_sweep() == {"unstuck": 0, "deliveries": 0, "results": 0}
        assert not upstream.calls


def test_erasure_waits_while_a_submission_is_being_sent(learner, staff):
    make_attempt(learner, 9103, state=State.SUBMITTING)

    with pytest.raises(ErasureDeferred):
        learner_erase(learner=learner, erased_by=staff)

    learner.refresh_from_db()
    assert learner.status == Learner.Status.ACTIVE and learner.username == "lee.learner"
    assert AttemptAnswer.objects.filter(attempt__learner=learner).count() == 6


def test_the_assessments_app_forgets_its_part_and_names_the_rows_it_keeps(learner, other_learner):
    make_attempt(other_learner, 9201, state=State.COMPLETED)
    attempts = AssessmentAttempt.objects.filter(learner=learner)
    result = AssessmentResult.objects.get(attempt__learner=learner)
    assert all(a.content and a.session for a in attempts.all())
    assert AttemptAnswer.objects.filter(attempt__learner=learner).count() == 4
    assert result.trait_title and result.loa_score == Decimal("72.35")

    with transaction.atomic():  # the erasure's transaction, which the service runs in
        kept = attempts_forget_learner(learner=learner)

    assert {model: set(ids) for model, ids in kept.items()} == {
        AssessmentAttempt: set(attempts.values_list("pk", flat=True)),
        AssessmentResult: {result.pk},
    }
    assert not AttemptAnswer.objects.filter(attempt__learner=learner).exists()
    assert [(a.content, a.session) for a in attempts.all()] == [({}, ""), ({}, "")]
    result.refresh_from_db()
    assert (result.trait_title, result.loa_score) == ("", Decimal("72.35"))
    assert AttemptAnswer.objects.filter(attempt__learner=other_learner).count() == 2
    assert AssessmentResult.objects.get(attempt__learner=other_learner).trait_title


@pytest.mark.django_db(transaction=True)
def test_the_assessments_app_forgets_nothing_outside_an_erasures_transaction():
    # Alone, it would commit half an erasure, and its lock would not hold until the end.
    pupil = make_learner("pat.pupil", "u-pat")
    make_attempt(pupil, 9301, state=State.COMPLETED)

    with pytest.raises(TransactionManagementError):
        attempts_forget_learner(learner=pupil)

    assert AttemptAnswer.objects.filter(attempt__learner=pupil).count() == 2


def test_the_admin_shows_when_data_was_erased_but_cannot_set_it(client, superuser, learner):
    # Setting it by hand would mark the learner erased with nothing erased and no audit event:
    # only learner_erase sets it.
    client.force_login(superuser)
    change = f"/admin/learners/learner/{learner.pk}/change/"

    client.post(change, {"erased_at_0": "2026-01-05", "erased_at_1": "09:30:00", "_save": "Save"})

    learner.refresh_from_db()
    assert learner.erased_at is None and learner.status == Learner.Status.ACTIVE
    page = client.get(change)
    html = page.content.decode()
    assert page.status_code == 200 and "<label>Personal data erased at:</label>" in html
    assert 'name="erased_at_0"' not in html
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.LEARNER_ERASED).exists()


def test_erasing_twice_is_harmless(learner, staff):
    erase(learner, staff)
    first = learner.erased_at

    erase(learner, staff)

    assert learner.username == f"erased-{learner.pk}"
    assert learner.erased_at == first
    assert AssessmentAttempt.objects.filter(learner=learner).count() == 2


def test_erasing_a_learner_whose_token_is_taken_still_gives_a_unique_username(learner, staff):
    make_learner(f"erased-{learner.pk}", "u-squatter")

    erase(learner, staff)

    assert learner.username.startswith(f"erased-{learner.pk}-")
    assert learner.user.username == learner.username


# Erasing through the staff pages.


def test_the_detail_page_offers_the_export_and_the_erasure(learner, staff_client):
    page = staff_client.get(f"/learners/{learner.pk}/").content.decode()

    assert '<h2 id="personal-data">Personal data</h2>' in page
    assert f'href="/learners/{learner.pk}/export/"' in page
    assert f'href="/learners/{learner.pk}/erase/"' in page
    assert "Erase this learner's personal data" in page


def test_the_confirmation_page_says_the_upstream_keeps_its_own_copy(learner, staff_client):
    page = staff_client.get(f"/learners/{learner.pk}/erase/").content.decode()

    assert "The assessment service keeps its own copy" in page
    assert "cannot delete them" in page
    assert learner.upstream_user_id in page  # to quote when asking the provider
    assert 'name="erase"' in page
    assert Learner.objects.get(pk=learner.pk).status == Learner.Status.ACTIVE


def test_a_post_without_the_confirmation_button_erases_nothing(learner, staff_client):
    response = staff_client.post(f"/learners/{learner.pk}/erase/")

    assert response.status_code == 200
    assert "The assessment service keeps its own copy" in response.content.decode()
    assert Learner.objects.get(pk=learner.pk).status == Learner.Status.ACTIVE
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.LEARNER_ERASED).exists()


def test_staff_erase_a_learner_and_the_audit_trail_records_who_without_personal_data(
    learner, staff_client, staff
):
    details = personal_details(learner)

    response = staff_client.post(
        f"/learners/{learner.pk}/erase/", {"erase": "yes"}, REMOTE_ADDR="192.0.2.44", follow=True
    )

    assert response.redirect_chain == [("/learners/", 302)]
    assert f"The personal data of learner #{learner.pk} is erased." in response.content.decode()
    assert Learner.objects.get(pk=learner.pk).status == Learner.Status.ERASED
    event = AuditEvent.objects.get(action=AuditEvent.Action.LEARNER_ERASED)
    assert (event.actor, event.actor_username) == (staff, "sam.staff")
    assert (event.learner_id, event.learner_ref) == (learner.pk, str(learner.pk))
    assert event.ip_address == "192.0.2.44"
    recorded = json.dumps([event.detail, event.actor_username, event.learner_ref])
    assert not [detail for detail in details if detail in recorded]


def test_erasing_again_from_the_page_only_says_it_is_done(learner, staff_client):
    staff_client.post(f"/learners/{learner.pk}/erase/", {"erase": "yes"})

    response = staff_client.post(f"/learners/{learner.pk}/erase/", {"erase": "yes"}, follow=True)

    assert response.redirect_chain == [("/learners/", 302)]
    assert "already erased" in response.content.decode()
    assert AuditEvent.objects.filter(action=AuditEvent.Action.LEARNER_ERASED).count() == 1


def test_the_page_explains_when_a_submission_in_flight_holds_up_the_erasure(learner, staff_client):
    make_attempt(learner, 9103, state=State.SUBMITTING)

    response = staff_client.post(f"/learners/{learner.pk}/erase/", {"erase": "yes"})

    assert response.status_code == 200
    assert "Nothing was erased: try again in a few minutes" in response.content.decode()
    assert Learner.objects.get(pk=learner.pk).status == Learner.Status.ACTIVE
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.LEARNER_ERASED).exists()


# Exporting.


@pytest.fixture
def api_key(settings) -> str:
    settings.PARTNER_API_KEY = API_KEY
    return API_KEY


def download(staff_client, learner: Learner) -> tuple[object, dict]:
    response = staff_client.get(f"/learners/{learner.pk}/export/")
    assert response.status_code == 200
    return response, json.loads(response.content)


def test_the_export_is_a_json_download_named_after_the_learner(learner, staff_client):
    response, _export = download(staff_client, learner)

    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"] == f'attachment; filename="learner-{learner.pk}.json"'
    assert "no-store" in response["Cache-Control"]


def test_the_export_holds_the_learner_record(learner, staff_client, staff):
    learner.registered_by = staff
    learner.save()

    _response, export = download(staff_client, learner)

    assert export["learner"] == {
        "id": learner.pk,
        "username": "lee.learner",
        "first_name": "Lee",
        "last_name": "Pupil",
        "email": "lee.learner@example.org",
        "dob": "2010-05-17",
        "level": "LOA_PARTNER_LEVEL2",
        "level_name": "Secondary",
        "status": "active",
        "upstream_user_id": "u-lee",
        "registered_at": learner.registered_at.isoformat(),
        "registered_by": "sam.staff",
        "erased_at": None,
    }
    assert export["sign_in_account"]["username"] == "lee.learner"
    assert export["sign_in_account"]["can_sign_in"] is True
    assert "keeps its own copy" in export["held_elsewhere"]


def test_the_export_holds_every_attempt_with_questions_chosen_answers_and_results(
    learner, staff_client
):
    _response, export = download(staff_client, learner)

    by_id = {attempt["assessment_id"]: attempt for attempt in export["assessments"]}
    assert sorted(by_id) == [9101, 9102]
    completed, open_attempt = by_id[9101], by_id[9102]
    assert completed["state"] == "completed" and open_attempt["state"] == "in_progress"
    assert completed["title"] == "Learning habits check 9101"
    assert open_attempt["last_problem"] == "The assessment service could not be reached."
    assert [q["text"] for q in completed["questions"]] == [
        "Question 1 of assessment 9101",
        "Question 2 of assessment 9101",
    ]
    assert completed["questions"][0]["chosen_answer"]["id"] == "q-1-a2"
    assert completed["questions"][0]["chosen_answer"]["text"] == answer_text(9101, 1, 2)
    assert completed["questions"][1]["answers_offered"] == [
        answer_text(9101, 2, 1),
        answer_text(9101, 2, 2),
    ]
    results = completed["results"]
    assert results["loa_score"] == "72.35" and results["risk_level"] == "Moderate"
    assert results["trait_title"] == "The night owl of assessment 9101"
    assert results["trait_copy"] == "You do your best thinking late."
    assert results["trait_signs_html"] == "<ul><li>Tired in the morning</li></ul>"
    assert results["trait_tips_html"] == "<p>Keep a regular bedtime</p>"
    assert results["result_description_html"] == "<p>Sleep affects your learning.</p>"
    assert results["focus_areas"] == [
        {"name": "SLEEP & TIREDNESS", "needs_help": "yes", "needs_help_flagged": True,
         "questions_count": 2},
        {"name": "EXAM ANXIETY", "needs_help": "no", "needs_help_flagged": False,
         "questions_count": 1},
    ]  # fmt: skip
    assert open_attempt["results"] is None


def test_the_export_writes_every_date_in_iso_8601(learner, staff_client):
    _response, export = download(staff_client, learner)

    completed = next(a for a in export["assessments"] if a["assessment_id"] == 9101)
    stamps = [
        export["exported_at"],
        export["learner"]["registered_at"],
        completed["offered_at"],
        completed["started_at"],
        completed["submitted_at"],
        completed["completed_at"],
        completed["results"]["received_at"],
        completed["questions"][0]["chosen_answer"]["saved_at"],
    ]
    for stamp in stamps:
        assert datetime.fromisoformat(stamp).tzinfo is not None, stamp
    assert date.fromisoformat(export["learner"]["dob"]) == date(2010, 5, 17)


def test_the_export_holds_the_audit_events_about_the_learner(learner, other_learner, staff_client):
    staff_client.get(f"/learners/{learner.pk}/")  # results viewed
    staff_client.get(f"/learners/{other_learner.pk}/")

    _response, export = download(staff_client, learner)

    assert [(e["action"], e["by"]) for e in export["audit_events"]] == [
        ("results_viewed", "sam.staff")
    ]
    assert export["audit_events"][0]["detail"] == {"assessment_id": 9101}
    assert datetime.fromisoformat(export["audit_events"][0]["at"])


def test_the_export_holds_no_password_hash_api_key_or_upstream_session(
    learner, staff_client, api_key
):
    password_hash = learner.user.password
    response, export = download(staff_client, learner)

    body = response.content.decode()
    for secret in [password_hash, password_hash.split("$")[-1], api_key, PASSWORD, "session-"]:
        assert secret not in body
    assert set(export["sign_in_account"]) == {
        "username", "active", "can_sign_in", "created_at", "last_signed_in_at"
    }  # fmt: skip


def test_the_export_holds_the_school_account_and_the_kind_of_second_factor(learner, staff_client):
    link_school_account(learner)

    response, export = download(staff_client, learner)

    [school_account] = export["school_accounts"]
    assert school_account["provider"] == "google"
    assert school_account["id_at_provider"] == "10769150350006150715113082367"
    assert school_account["details_from_provider"]["email"] == "lee.learner@example.org"
    assert [factor["type"] for factor in export["second_factors"]] == ["totp"]
    assert "not-a-real-secret" not in response.content.decode()


def test_exporting_is_recorded_in_the_audit_trail(learner, staff_client, staff):
    download(staff_client, learner)

    event = AuditEvent.objects.get(action=AuditEvent.Action.LEARNER_EXPORTED)
    assert (event.actor, event.learner, event.ip_address) == (staff, learner, "127.0.0.1")
    assert event.detail == {}


def test_the_export_service_of_an_erased_learner_holds_nothing_that_names_them(learner, staff):
    link_school_account(learner)
    details = [*personal_details(learner), "10769150350006150715113082367"]
    erase(learner, staff)

    export = json.dumps(learner_data_export(learner=learner, exported_by=staff))

    assert not [detail for detail in details if detail in export]
    assert f"erased-{learner.pk}" in export


# Who may do it.


@pytest.mark.parametrize("action", ["export", "erase"])
@pytest.mark.parametrize("method", ["get", "post"])
@pytest.mark.parametrize("person", ["learner", "other_learner"])
def test_learners_get_not_found_for_export_and_erase(
    client, request, learner, other_learner, action, method, person
):
    client.force_login(request.getfixturevalue(person).user)

    response = getattr(client, method)(f"/learners/{learner.pk}/{action}/", {"erase": "yes"})

    assert response.status_code == 404
    assert Learner.objects.get(pk=learner.pk).status == Learner.Status.ACTIVE
    assert not AuditEvent.objects.exists()


@pytest.mark.parametrize("action", ["export", "erase"])
@pytest.mark.parametrize("method", ["get", "post"])
def test_anonymous_visitors_are_sent_to_sign_in_for_export_and_erase(
    client, learner, action, method
):
    path = f"/learners/{learner.pk}/{action}/"

    response = client.get(path) if method == "get" else client.post(path, {"erase": "yes"})

    assert response.status_code == 302
    assert response.url == f"/accounts/login/?next={path}"
    assert Learner.objects.get(pk=learner.pk).status == Learner.Status.ACTIVE
    assert not AuditEvent.objects.exists()


def test_the_export_is_a_download_only_and_refuses_a_post_from_staff(learner, staff_client):
    assert staff_client.post(f"/learners/{learner.pk}/export/").status_code == 405
    assert not AuditEvent.objects.exists()
