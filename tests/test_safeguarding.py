"""Safeguarding alerts: raised fail-safe, emailed once, acknowledged, escalated."""

import threading
from datetime import date, datetime, time, timedelta

import pytest
from django.core import mail
from django.core.management import call_command
from django.db import connections
from django.test import Client
from django.utils import timezone

from accounts.models import StaffRole
from assessments import delivery
from assessments.concern import value_key
from assessments.models import AssessmentAttempt, AssessmentResult
from audit.models import AuditEvent
from followups.models import FollowUp
from learners.models import Learner
from safeguarding.hours import school_deadline
from safeguarding.mail import alert_email_send
from safeguarding.models import Alert, AlertEmail
from safeguarding.services import alert_acknowledge, alerts_escalate_due, alerts_sweep
from schools.models import PartnerSettings
from staff.services import staff_add, staff_change
from tests.factories import DSL_ON_DUTY_EMAIL, PASSWORD, make_staff, signed_in
from tests.journeys import page_showing, register_pupil
from tests.safeguarding_support import finish_with_labels

Action = AuditEvent.Action


@pytest.fixture
def pupil(upstream, staff):
    return register_pupil(staff)


def deputy(username="dee.deputy", email="dee.deputy@school.example"):
    user = make_staff(username, role=StaffRole.DEPUTY_DSL)
    user.email = email
    user.save(update_fields=["email"])
    return user


# --- which values raise an alert --------------------------------------------------------


def test_values_match_ignoring_case_spaces_and_every_kind_of_dash():
    assert value_key("Yes - priority") == value_key("YES–Priority") == value_key(" yes — priority ")
    assert value_key("Yes – urgent") != value_key("Yes - priority")


@pytest.mark.django_db
def test_a_priority_needs_help_value_alerts_the_leads_and_marks_the_follow_up(pupil, upstream):
    attempt = finish_with_labels(upstream, pupil, needs_help="Yes - priority")

    alert = Alert.objects.get(attempt=attempt)
    assert alert.reason == Alert.Reason.PRIORITY
    follow_up = FollowUp.objects.get(attempt=attempt)
    assert follow_up.priority and alert.follow_up == follow_up
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == [DSL_ON_DUTY_EMAIL]


@pytest.mark.django_db
def test_an_unlisted_value_with_an_en_dash_alerts_as_unrecognised(pupil, upstream, staff):
    attempt = finish_with_labels(upstream, pupil, needs_help="Yes – urgent")

    alert = Alert.objects.get(attempt=attempt)
    assert alert.reason == Alert.Reason.UNRECOGNISED
    assert {"field": "needs_help", "value": "Yes – urgent", "reason": "unrecognised"} in (
        alert.values
    )
    page = signed_in(staff).get(f"/safeguarding/alerts/{alert.pk}/").content.decode()
    assert "unrecognised value: review" in page and "Yes – urgent" in page
    assert len(mail.outbox) == 1


@pytest.mark.django_db
def test_a_high_risk_level_alerts_even_when_no_area_needs_help(pupil, upstream):
    attempt = finish_with_labels(upstream, pupil, needs_help="no", risk_level="HIGH")

    assert Alert.objects.get(attempt=attempt).reason == Alert.Reason.PRIORITY
    assert FollowUp.objects.get(attempt=attempt).priority


@pytest.mark.django_db
def test_routine_values_open_an_ordinary_follow_up_and_alert_nobody(pupil, upstream):
    attempt = finish_with_labels(upstream, pupil, needs_help="Yes", risk_level="moderate")

    assert not Alert.objects.exists()
    assert mail.outbox == []
    assert not FollowUp.objects.get(attempt=attempt).priority


@pytest.mark.django_db
def test_the_partner_decides_what_is_routine(pupil, upstream):
    settings_row = PartnerSettings.current()
    settings_row.needs_help_routine = "No\nYes\nYes - urgent"
    settings_row.save()

    attempt = finish_with_labels(upstream, pupil, needs_help="YES – Urgent")

    assert not Alert.objects.exists()
    # The result arrived and was read: its item is opened, as an ordinary one.
    assert FollowUp.objects.get(attempt=attempt).priority is False


@pytest.mark.django_db
def test_an_adults_results_alert_unless_the_partner_says_otherwise(upstream, staff):
    adult = register_pupil(staff, "ada.adult")
    Learner.objects.filter(pk=adult.pk).update(dob=date(2000, 1, 1))
    adult.refresh_from_db()
    settings_row = PartnerSettings.current()
    settings_row.adults_without_alerts = True
    settings_row.save()

    attempt = finish_with_labels(upstream, adult, needs_help="Yes - priority")

    assert not Alert.objects.filter(attempt=attempt).exists()
    settings_row.adults_without_alerts = False
    settings_row.save()
    child = register_pupil(staff, "cai.child")
    assert Alert.objects.filter(
        attempt=finish_with_labels(upstream, child, needs_help="Yes - priority")
    ).exists()


# --- exactly one email -------------------------------------------------------------------


@pytest.mark.django_db
def test_a_priority_result_delivered_again_sends_no_second_email(pupil, upstream):
    attempt = finish_with_labels(upstream, pupil, needs_help="Yes - priority")
    stored = AssessmentResult.objects.get(attempt=attempt)

    # A retried delivery meets the stored result: a worker that read the attempt before it
    # completed fetches the results again and stores them again.
    stale = AssessmentAttempt.objects.select_related("learner").get(pk=attempt.pk)
    stale.state = AssessmentAttempt.State.SUBMITTED
    again = delivery.attempt_fetch_results(attempt=stale)
    alerts_sweep()

    assert again == stored and AssessmentResult.objects.count() == 1
    assert Alert.objects.count() == 1 and FollowUp.objects.count() == 1
    assert AlertEmail.objects.get().state == AlertEmail.State.SENT
    assert len(mail.outbox) == 1


@pytest.mark.backend  # select_for_update in racing threads
@pytest.mark.django_db(transaction=True)
def test_racing_workers_store_a_priority_result_once_and_send_one_email(staff, upstream):
    pupil = register_pupil(staff)
    upstream.state.faults.add("results", "error", status=404, times=1)
    attempt = finish_submitted(upstream, pupil)
    upstream.state.faults.add("results", "relabel", needs_help="Yes - priority")

    def fetch():
        try:
            fresh = AssessmentAttempt.objects.select_related("learner").get(pk=attempt.pk)
            return delivery.attempt_fetch_results(attempt=fresh)
        finally:
            connections.close_all()

    outcomes = run_together(4, fetch)

    assert all(outcome is not None for outcome in outcomes), outcomes
    assert Alert.objects.count() == 1
    assert FollowUp.objects.filter(priority=True).count() == 1
    assert len(mail.outbox) == 1


def finish_submitted(upstream, pupil):
    from tests.journeys import attempt_url, ready_to_send

    client = Client()
    attempt = ready_to_send(client, pupil)
    client.post(attempt_url(attempt, "submit/"))
    attempt.refresh_from_db()
    assert attempt.state == AssessmentAttempt.State.SUBMITTED
    upstream.state.faults.clear()
    return attempt


def run_together(count, work):
    outcomes = [None] * count
    start = threading.Barrier(count)

    def run(index):
        start.wait(timeout=30)
        try:
            outcomes[index] = work()
        except Exception as error:  # noqa: BLE001 - the test reports what each thread met
            outcomes[index] = error

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return outcomes


@pytest.mark.backend  # select_for_update in racing threads
@pytest.mark.django_db(transaction=True)
def test_two_senders_of_one_email_send_it_once(staff):
    teacher = make_staff("tom.teacher", role=StaffRole.TEACHER)
    teacher.email = "tom@school.example"
    teacher.save()
    alert = make_test_alert_for(teacher)
    email = alert.emails.get()
    AlertEmail.objects.filter(pk=email.pk).update(state=AlertEmail.State.WAITING, sent_at=None)
    mail.outbox.clear()

    def send():
        try:
            return alert_email_send(email_id=email.pk)
        finally:
            connections.close_all()

    outcomes = run_together(4, send)

    assert len(mail.outbox) == 1, outcomes
    assert AlertEmail.objects.get(pk=email.pk).tries == 2  # the first send, then this one


def make_test_alert_for(user):
    staff_change(
        user=user,
        role=StaffRole.DSL,
        groups=[],
        email=user.email,
        is_active=True,
        changed_by=None,
        address=None,
    )
    return Alert.objects.get(kind=Alert.Kind.TEST, test_recipient=user)


# --- the email says almost nothing -------------------------------------------------------


@pytest.mark.django_db
def test_the_email_names_no_one_and_links_to_a_page_that_needs_signing_in(pupil, upstream):
    Learner.objects.filter(pk=pupil.pk).update(first_name="Zebedee", last_name="Quill")
    attempt = finish_with_labels(upstream, pupil, needs_help="Yes - priority")
    alert = Alert.objects.get(attempt=attempt)

    message = mail.outbox[0]
    text = message.subject + message.body
    for private in ["Zebedee", "Quill", "pia.pupil", "priority", "Sleep", "Stress", "Moderate"]:
        assert private.lower() not in text.lower(), private
    link = f"http://127.0.0.1:8000/safeguarding/alerts/{alert.pk}/"
    assert link in message.body
    assert Client().get(link.removeprefix("http://127.0.0.1:8000")).status_code == 302


@pytest.mark.django_db
def test_alerts_never_go_to_admins_by_default(pupil, upstream):
    admin = make_staff("ann.admin", role=StaffRole.ADMIN)
    admin.email = "ann.admin@school.example"
    admin.save()
    deputy()

    finish_with_labels(upstream, pupil, needs_help="Yes - priority")

    (message,) = mail.outbox
    assert sorted(message.to) == sorted([DSL_ON_DUTY_EMAIL, "dee.deputy@school.example"])


# --- acknowledging and escalating --------------------------------------------------------


@pytest.mark.django_db
def test_a_lead_acknowledges_an_alert_audited_with_who_and_when(pupil, upstream, staff):
    alert = Alert.objects.get(
        attempt=finish_with_labels(upstream, pupil, needs_help="Yes - priority")
    )
    client = signed_in(staff)
    assert "waiting for acknowledgement" in client.get("/learners/").content.decode()

    taken_on = {"action": "Spoke with the pupil", "category": "wellbeing", "note": ""}
    response = client.post(f"/safeguarding/alerts/{alert.pk}/acknowledge/", taken_on, follow=True)

    alert.refresh_from_db()
    assert alert.acknowledged_by == staff and alert.acknowledged_at is not None
    assert alert.category == Alert.Category.WELLBEING
    event = AuditEvent.objects.get(action=Action.ALERT_ACKNOWLEDGED)
    assert event.actor == staff and event.detail["alert"] == alert.pk
    acknowledged = response.content.decode()
    assert response.status_code == 200 and f"<h1>Safeguarding alert {alert.pk}</h1>" in acknowledged
    assert "Alert acknowledged" in acknowledged
    assert "waiting for acknowledgement" not in acknowledged
    again = client.post(f"/safeguarding/alerts/{alert.pk}/acknowledge/", taken_on, follow=True)
    assert "had already acknowledged" in again.content.decode()


@pytest.mark.django_db
def test_only_safeguarding_leads_see_and_acknowledge_alerts(pupil, upstream):
    alert = Alert.objects.get(
        attempt=finish_with_labels(upstream, pupil, needs_help="Yes - priority")
    )
    for role in [StaffRole.ADMIN, StaffRole.TEACHER, StaffRole.HEAD_OF_YEAR]:
        client = signed_in(make_staff(f"x.{role}", role=role))
        assert client.get("/safeguarding/").status_code == 404
        taken_on = {"action": "Spoke with the pupil", "category": "wellbeing"}
        response = client.post(f"/safeguarding/alerts/{alert.pk}/acknowledge/", taken_on)
        assert response.status_code == 404
    assert signed_in(pupil.user).get(f"/safeguarding/alerts/{alert.pk}/").status_code == 404
    alert.refresh_from_db()
    assert alert.acknowledged_at is None


@pytest.mark.django_db
def test_an_unacknowledged_alert_escalates_to_the_deputies_after_the_set_time(
    pupil, upstream, staff
):
    deputy()
    alert = Alert.objects.get(
        attempt=finish_with_labels(upstream, pupil, needs_help="Yes - priority")
    )
    mail.outbox.clear()

    assert alerts_escalate_due(now=alert.escalate_at - timedelta(seconds=1)) == 0
    assert alerts_escalate_due(now=alert.escalate_at + timedelta(seconds=1)) == 1
    assert alerts_escalate_due(now=alert.escalate_at + timedelta(minutes=5)) == 0

    alert.refresh_from_db()
    assert alert.escalated_at is not None
    (message,) = mail.outbox
    assert "dee.deputy@school.example" in message.to
    assert "not yet acknowledged" in message.subject
    assert AuditEvent.objects.filter(action=Action.ALERT_ESCALATED).count() == 1
    page = signed_in(staff).get("/learners/").content.decode()
    assert "1 is overdue" in page
    alert_acknowledge(alert=alert, by=staff, address=None)
    assert "overdue" not in page_showing(signed_in(staff), "/learners/", "<h1>Learners</h1>")


@pytest.mark.django_db
def test_the_sweep_command_escalates_with_the_clock_moved(pupil, upstream, monkeypatch):
    alert = Alert.objects.get(
        attempt=finish_with_labels(upstream, pupil, needs_help="Yes - priority")
    )
    later = alert.escalate_at + timedelta(minutes=1)
    monkeypatch.setattr(timezone, "now", lambda: later)

    call_command("sweep_alerts")

    alert.refresh_from_db()
    assert alert.escalated_at == later


def local(text):
    return timezone.make_aware(datetime.fromisoformat(text))


def test_escalation_counts_school_hours_only():
    opens, closes = time(8, 30), time(16)
    # Wednesday 25 November 2026.
    assert school_deadline(local("2026-11-25 10:00"), 30, opens=opens, closes=closes) == local(
        "2026-11-25 10:30"
    )
    assert school_deadline(local("2026-11-25 15:50"), 30, opens=opens, closes=closes) == local(
        "2026-11-26 08:50"
    )
    assert school_deadline(local("2026-11-27 15:50"), 30, opens=opens, closes=closes) == local(
        "2026-11-30 08:50"
    )
    assert school_deadline(local("2026-11-28 12:00"), 30, opens=opens, closes=closes) == local(
        "2026-11-30 09:00"
    )


# --- a failed send shows -----------------------------------------------------------------


@pytest.mark.django_db
def test_a_failed_send_shows_in_every_leads_banner_and_is_tried_again(
    pupil, upstream, staff, settings
):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", 9, 2
    finish_with_labels(upstream, pupil, needs_help="Yes - priority")

    email = AlertEmail.objects.get()
    assert email.state == AlertEmail.State.WAITING and email.sent_at is None
    assert email.last_error and email.next_try_at is not None
    page = signed_in(staff).get("/dashboard/").content.decode()
    assert "1 alert email could not be sent" in page
    admin = make_staff("ann.admin", role=StaffRole.ADMIN)
    operations = signed_in(admin).get("/operations/").content.decode()
    assert (
        "Safeguarding alert emails not sent" in operations
        and "ConnectionRefusedError" in operations
    )

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    AlertEmail.objects.update(next_try_at=timezone.now() - timedelta(seconds=1))
    alerts_sweep()

    assert AlertEmail.objects.get().state == AlertEmail.State.SENT
    assert len(mail.outbox) == 1
    dashboard = page_showing(signed_in(staff), "/dashboard/", "<h1>Cohort dashboard</h1>")
    assert "could not be sent" not in dashboard


# --- a new lead gets a test alert --------------------------------------------------------


@pytest.mark.django_db
def test_granting_the_role_sends_a_test_alert_every_lead_sees_until_acknowledged(staff):
    new_lead = staff_add(
        username="nia.new",
        email="nia.new@school.example",
        role=StaffRole.DSL,
        password=PASSWORD,
        added_by=None,
        address=None,
    )

    (message,) = mail.outbox
    assert message.to == ["nia.new@school.example"] and "Test" in message.subject
    alert = Alert.objects.get(kind=Alert.Kind.TEST)
    for lead in [staff, new_lead]:
        assert "A test alert is waiting" in signed_in(lead).get("/learners/").content.decode()
    signed_in(staff).post(f"/safeguarding/alerts/{alert.pk}/acknowledge/")
    learners = page_showing(signed_in(new_lead), "/learners/", "<h1>Learners</h1>")
    assert "A test alert is waiting" not in learners


@pytest.mark.django_db
def test_changing_a_teacher_into_a_deputy_sends_a_test_alert_once():
    teacher = make_staff("tom.teacher", role=StaffRole.TEACHER)
    teacher.email = "tom@school.example"
    teacher.save()

    for _ in range(2):
        staff_change(
            user=teacher,
            role=StaffRole.DEPUTY_DSL,
            groups=[],
            email=teacher.email,
            is_active=True,
            changed_by=None,
            address=None,
        )

    assert Alert.objects.filter(kind=Alert.Kind.TEST, test_recipient=teacher).count() == 1


# --- the dashboard shows how long acknowledging took -------------------------------------


@pytest.mark.django_db
def test_the_dashboard_shows_median_and_worst_time_to_acknowledge_for_a_period(staff):
    now = timezone.now()
    for minutes in [4, 10, 90]:
        Alert.objects.create(
            kind=Alert.Kind.ASKED,
            reason=Alert.Reason.ASKED,
            raised_at=now - timedelta(days=1),
            escalate_at=now,
            acknowledged_at=now - timedelta(days=1) + timedelta(minutes=minutes),
        )
    Alert.objects.create(
        kind=Alert.Kind.ASKED,
        reason=Alert.Reason.ASKED,
        raised_at=now - timedelta(days=400),
        escalate_at=now,
        acknowledged_at=now - timedelta(days=399),
    )

    yesterday = timezone.localdate() - timedelta(days=1)
    page = signed_in(staff).get(f"/dashboard/?from={yesterday}").content.decode()

    assert "Median time to acknowledge" in page and "10 min" in page
    assert "1 h 30 min" in page and "1 day" not in page
    everything = signed_in(staff).get("/dashboard/").content.decode()
    assert "1 day 0 h" in everything


@pytest.mark.django_db
def test_an_admin_sets_the_lists_and_school_day_on_the_settings_page():
    admin = make_staff("ann.admin", role=StaffRole.ADMIN)
    client = signed_in(admin)

    response = client.post(
        "/settings/",
        {
            "needs_help_priority": "Yes - priority\nUrgent",
            "alert_escalate_minutes": "45",
            "school_day_starts": "08:45",
            "school_day_ends": "15:30",
        },
    )

    assert response.status_code == 302
    saved = PartnerSettings.current()
    assert saved.needs_help_priority == "Yes - priority\nUrgent"
    assert saved.alert_escalate_minutes == 45
    assert saved.school_day_starts == time(8, 45) and saved.school_day_ends == time(15, 30)
    assert saved.risk_levels_priority == "High"  # left out: unchanged
    event = AuditEvent.objects.get(action=Action.SETTINGS_CHANGED)
    assert event.detail["school_day_starts"] == "08:45"
    refused = client.post("/settings/", {"school_day_starts": "16:00", "school_day_ends": "09:00"})
    assert "The school day must end after it starts." in refused.content.decode()


@pytest.mark.django_db
def test_an_email_that_found_no_lead_goes_to_the_next_lead_appointed(learner, settings):
    settings.ALERT_EMAIL_MAX_TRIES = 1
    User = type(make_staff("tmp.x", role=StaffRole.TEACHER))
    User.objects.filter(username="dsl.on.duty").update(email="")
    signed_in(learner.user).post("/me/talk/")
    email = AlertEmail.objects.get(alert__kind=Alert.Kind.ASKED)
    assert email.state == AlertEmail.State.FAILED and mail.outbox == []
    assert (
        "1 alert email could not be sent"
        in signed_in(User.objects.get(username="dsl.on.duty")).get("/learners/").content.decode()
    )

    staff_add(
        username="nia.new",
        email="nia.new@school.example",
        role=StaffRole.DSL,
        password=PASSWORD,
        added_by=None,
        address=None,
    )

    email.refresh_from_db()
    assert email.state == AlertEmail.State.SENT
    assert email.recipients == ["nia.new@school.example"]
    assert any("needs review" in message.subject for message in mail.outbox)


@pytest.mark.django_db
def test_an_escalation_email_acknowledged_before_it_went_is_not_sent(pupil, upstream, staff):
    alert = Alert.objects.get(
        attempt=finish_with_labels(upstream, pupil, needs_help="Yes - priority")
    )
    with_escalation_waiting = AlertEmail.objects.create(
        alert=alert, purpose=AlertEmail.Purpose.ESCALATED, recipients=[DSL_ON_DUTY_EMAIL]
    )
    alert_acknowledge(alert=alert, by=staff, address=None)
    mail.outbox.clear()

    assert alert_email_send(email_id=with_escalation_waiting.pk) == AlertEmail.State.SKIPPED
    assert mail.outbox == []


@pytest.mark.django_db
def test_a_pupils_request_is_audited_without_their_account_or_address(learner):
    signed_in(learner.user).post("/me/talk/", REMOTE_ADDR="198.51.100.7")

    event = AuditEvent.objects.get(action=Action.HELP_ASKED)
    assert event.learner == learner
    assert event.actor is None and event.actor_username == "" and event.ip_address is None


@pytest.mark.django_db
def test_an_admin_who_reads_no_results_is_not_told_why_a_record_is_held(learner):
    signed_in(learner.user).post("/me/talk/")
    admin = make_staff("ann.admin", role=StaffRole.ADMIN)

    page = signed_in(admin).get(f"/learners/{learner.pk}/").content.decode()

    assert "because of a safeguarding matter" in page
    assert "follow-up about them" not in page and "alert about them" not in page


@pytest.mark.django_db
def test_the_alert_and_the_list_name_who_acknowledged_as_the_chronology_does(pupil, upstream):
    lead = make_staff("sam.lead")
    lead.first_name, lead.last_name = "Sam", "Lead"
    lead.save(update_fields=["first_name", "last_name"])
    alert = Alert.objects.get(
        attempt=finish_with_labels(upstream, pupil, needs_help="Yes - priority")
    )
    client = signed_in(lead)
    taken_on = {"action": "Spoke with the pupil", "category": "wellbeing", "note": ""}
    client.post(f"/safeguarding/alerts/{alert.pk}/acknowledge/", taken_on)

    page = page_showing(client, f"/safeguarding/alerts/{alert.pk}/", "<dt>Acknowledged</dt>")
    listed = page_showing(client, "/safeguarding/?show=all", "<h1>Safeguarding alerts</h1>")

    assert "<dd>By Sam Lead at " in page and "<td>Sam Lead, " in listed
    assert "sam.lead" not in page and "sam.lead" not in listed


@pytest.mark.django_db
def test_a_test_alert_names_the_new_lead_it_went_to(staff):
    nia = make_staff("nia.new", role=StaffRole.TEACHER)
    nia.first_name, nia.last_name, nia.email = "Nia", "Newton", "nia@school.example"
    nia.save(update_fields=["first_name", "last_name", "email"])
    alert = make_test_alert_for(nia)

    page = page_showing(signed_in(staff), f"/safeguarding/alerts/{alert.pk}/", "<dt>Sent to</dt>")

    assert "The new safeguarding lead Nia Newton." in page and "nia.new" not in page
