"""The audit trail: who did what to which learner, when and from where; append-only."""

import json
from decimal import Decimal

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.utils import timezone

from assessments.models import AssessmentAttempt, AssessmentResult
from audit.models import AuditEvent
from audit.services import audit_record
from learners.models import Learner
from tests.journeys import attempt_url, ready_to_send

Action = AuditEvent.Action
State = AssessmentAttempt.State

LEARNER_PASSWORD = "Quiet-Library-Corner-58"
NEW_PASSWORD = "Green-Window-Ledge-71"


def completed_attempt(learner: Learner, assessment_id: int = 9101) -> AssessmentAttempt:
    """Store an attempt with results, as delivery leaves it."""
    attempt = AssessmentAttempt.objects.create(
        learner=learner, assessment_id=assessment_id, state=State.COMPLETED
    )
    AssessmentResult.objects.create(attempt=attempt, loa_score=Decimal("61.5"), risk_level="Low")
    return attempt


def only_event(action: str) -> AuditEvent:
    events = list(AuditEvent.objects.filter(action=action))
    assert len(events) == 1, f"{len(events)} {action} events"
    return events[0]


def assert_recorded(event: AuditEvent, *, actor, learner: Learner, ip: str, since) -> None:
    """Assert the event says who, which learner, from where, and when."""
    assert event.actor == actor
    assert event.actor_username == actor.get_username()
    assert event.learner == learner
    assert event.learner_ref == str(learner.pk)
    assert event.ip_address == ip
    assert since <= event.at <= timezone.now()


# Each staff action leaves one event.


@pytest.mark.django_db
def test_registering_a_learner_records_who_registered_whom_when_and_from_where(
    staff_client, staff, upstream
):
    since = timezone.now()

    staff_client.post(
        "/learners/new/",
        {"username": "ria.reader", "password": LEARNER_PASSWORD, "dob": "2009-03-27"},
        REMOTE_ADDR="203.0.113.7",
    )

    event = only_event(Action.LEARNER_REGISTERED)
    learner = Learner.objects.get(username="ria.reader")
    assert_recorded(event, actor=staff, learner=learner, ip="203.0.113.7", since=since)
    assert event.detail == {}


@pytest.mark.django_db
def test_a_registration_that_fails_upstream_records_nothing(staff_client, upstream):
    upstream.state.faults.add("create-learner", "500", times=1)

    response = staff_client.post(
        "/learners/new/",
        {"username": "ria.reader", "password": LEARNER_PASSWORD, "dob": "2009-03-27"},
    )

    assert response.status_code == 200  # the form again, saying why: not an error page
    assert "internal error" in response.content.decode()
    assert not Learner.objects.exists()
    assert not AuditEvent.objects.exists()


def test_viewing_a_learners_results_records_a_results_view(staff_client, staff, learner):
    completed_attempt(learner)
    since = timezone.now()

    staff_client.get(f"/learners/{learner.pk}/", REMOTE_ADDR="198.51.100.20")

    event = only_event(Action.RESULTS_VIEWED)
    assert_recorded(event, actor=staff, learner=learner, ip="198.51.100.20", since=since)
    assert event.detail == {"assessment_id": 9101}


def test_opening_one_attempts_results_records_a_results_view(staff_client, staff, learner):
    completed_attempt(learner, 9105)
    since = timezone.now()

    staff_client.get(f"/learners/{learner.pk}/attempts/9105/")

    event = only_event(Action.RESULTS_VIEWED)
    assert_recorded(event, actor=staff, learner=learner, ip="127.0.0.1", since=since)
    assert event.detail == {"assessment_id": 9105}


def test_a_learner_record_without_results_records_no_results_view(staff_client, learner):
    AssessmentAttempt.objects.create(learner=learner, assessment_id=9106)

    record = staff_client.get(f"/learners/{learner.pk}/")
    attempt = staff_client.get(f"/learners/{learner.pk}/attempts/9106/")

    assert (record.status_code, attempt.status_code) == (200, 200)
    assert f"<h1>{learner.display_name}</h1>" in record.content.decode()
    assert "#9106</h1>" in attempt.content.decode()
    assert not AuditEvent.objects.exists()


def test_retrying_a_submission_records_it_with_the_state_it_was_in(staff_client, staff, learner):
    attempt = AssessmentAttempt.objects.create(
        learner=learner, assessment_id=9107, state=State.REJECTED
    )
    since = timezone.now()

    staff_client.post(f"/operations/attempts/{attempt.pk}/retry/", REMOTE_ADDR="192.0.2.9")

    event = only_event(Action.SUBMISSION_RETRIED)
    assert_recorded(event, actor=staff, learner=learner, ip="192.0.2.9", since=since)
    assert event.detail == {"assessment_id": 9107, "state_before": "rejected"}


def test_resetting_a_learners_password_records_it_without_the_password(
    staff_client, staff, learner
):
    since = timezone.now()

    staff_client.post(
        f"/learners/{learner.pk}/password/",
        {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
        REMOTE_ADDR="192.0.2.10",
    )

    event = only_event(Action.PASSWORD_RESET)
    assert_recorded(event, actor=staff, learner=learner, ip="192.0.2.10", since=since)
    assert event.detail == {}


def test_exporting_and_erasing_a_learner_are_recorded(staff_client, staff, learner):
    since = timezone.now()

    staff_client.get(f"/learners/{learner.pk}/export/")
    staff_client.post(f"/learners/{learner.pk}/erase/", {"erase": "yes"})

    for action in (Action.LEARNER_EXPORTED, Action.LEARNER_ERASED):
        event = only_event(action)
        assert_recorded(event, actor=staff, learner=learner, ip="127.0.0.1", since=since)
        assert event.detail == {}


def test_a_learner_or_an_anonymous_visitor_leaves_no_event(client, learner, other_learner, staff):
    completed_attempt(learner)
    paths = [f"/learners/{learner.pk}/", f"/learners/{learner.pk}/attempts/9101/"]
    paths += [f"/learners/{learner.pk}/export/"]

    for person in (None, learner.user, other_learner.user):
        visitor = Client()
        if person is not None:
            visitor.force_login(person)
        for path in paths:
            response = visitor.get(path)
            if person is None:  # sent to sign in
                assert response.status_code == 302, path
                assert response.url.startswith(f"/accounts/login/?next={path}"), path
            else:  # a learner finds no staff page
                assert response.status_code == 404, path
                assert "<h1>Page not found</h1>" in response.content.decode(), path

    assert not AuditEvent.objects.exists()
    # The same visits by staff are recorded: the paths are the ones that record events.
    client.force_login(staff)
    assert [client.get(path).status_code for path in paths] == [200, 200, 200]
    assert AuditEvent.objects.count() == len(paths)


# The client IP.


def test_the_client_address_is_the_connections_and_a_forwarded_header_is_ignored(
    staff_client, learner
):
    staff_client.get(
        f"/learners/{learner.pk}/export/",
        REMOTE_ADDR="10.0.0.5",
        HTTP_X_FORWARDED_FOR="203.0.113.66",
    )

    assert only_event(Action.LEARNER_EXPORTED).ip_address == "10.0.0.5"


def test_behind_a_trusted_proxy_the_last_forwarded_address_is_the_client_address(
    staff_client, learner, settings
):
    settings.AUDIT_TRUST_X_FORWARDED_FOR = True

    # The client can write anything in the header; only the proxy's own entry, the last, counts.
    staff_client.get(
        f"/learners/{learner.pk}/export/",
        REMOTE_ADDR="10.0.0.5",
        HTTP_X_FORWARDED_FOR="198.51.100.1, 203.0.113.66",
    )

    assert only_event(Action.LEARNER_EXPORTED).ip_address == "203.0.113.66"


def test_behind_a_trusted_proxy_without_the_header_the_connections_address_is_kept(
    staff_client, learner, settings
):
    settings.AUDIT_TRUST_X_FORWARDED_FOR = True

    staff_client.get(f"/learners/{learner.pk}/export/", REMOTE_ADDR="10.0.0.5")

    assert only_event(Action.LEARNER_EXPORTED).ip_address == "10.0.0.5"


# Append-only.


@pytest.fixture
def event(staff, learner) -> AuditEvent:
    return audit_record(
        actor=staff, address="192.0.2.1", action=Action.RESULTS_VIEWED, learner=learner
    )


def test_an_event_cannot_be_changed(event):
    event.actor_username = "someone.else"

    with pytest.raises(PermissionError):
        event.save()

    assert AuditEvent.objects.get(pk=event.pk).actor_username == "sam.staff"


def test_an_event_cannot_be_deleted(event):
    with pytest.raises(PermissionError):
        event.delete()

    assert AuditEvent.objects.filter(pk=event.pk).exists()


def test_the_event_outlives_the_learners_erasure_and_still_says_who_acted(
    event, staff_client, learner
):
    staff_client.post(f"/learners/{learner.pk}/erase/", {"erase": "yes"})

    event.refresh_from_db()
    assert (event.learner, event.learner_ref, event.actor_username) == (
        learner,
        str(learner.pk),
        "sam.staff",
    )


def test_the_admin_lists_events_read_only(client, superuser, event):
    client.force_login(superuser)
    base = "/admin/audit/auditevent/"

    changelist = client.get(base)

    page = changelist.content.decode()
    assert changelist.status_code == 200
    assert "sam.staff" in page and "192.0.2.1" in page
    assert f'href="{base}add/"' not in page
    assert "delete_selected" not in page
    assert client.get(f"{base}add/").status_code == 403
    assert client.get(f"{base}{event.pk}/delete/").status_code == 403
    assert client.post(f"{base}{event.pk}/delete/", {"post": "yes"}).status_code == 403
    detail = client.get(f"{base}{event.pk}/change/")
    assert detail.status_code == 200
    assert 'name="_save"' not in detail.content.decode()
    client.post(f"{base}{event.pk}/change/", {"actor_username": "someone.else"})
    assert AuditEvent.objects.get(pk=event.pk).actor_username == "sam.staff"


def test_partner_staff_cannot_open_the_trail_in_the_admin(staff_client, event):
    response = staff_client.get("/admin/audit/auditevent/")

    assert response.status_code == 302
    assert response.url.startswith("/admin/login/")


# No secrets.


@pytest.mark.parametrize("key", ["password", "Password", "api_key", "APIKEY", "secret", "token"])
def test_audit_record_refuses_detail_that_could_hold_a_secret(staff, learner, key):
    with pytest.raises(ValueError, match="must not hold"):
        audit_record(
            actor=staff, address=None, action=Action.PASSWORD_RESET, learner=learner, **{key: "x"}
        )

    assert not AuditEvent.objects.exists()


def test_audit_record_of_an_anonymous_request_names_no_actor(learner):
    event = audit_record(
        actor=AnonymousUser(), address="192.0.2.3", action=Action.RESULTS_VIEWED, learner=learner
    )

    assert (event.actor, event.actor_username, event.ip_address) == (None, "", "192.0.2.3")


def every_field_of_every_event() -> str:
    """Return every stored value of every audit event as one text to search."""
    rows = AuditEvent.objects.values()
    return json.dumps([{k: str(v) for k, v in row.items()} for row in rows], default=str)


@pytest.mark.django_db
def test_events_of_a_whole_journey_hold_no_password_api_key_or_session(
    client, staff, superuser, upstream, settings
):
    staff_client = Client()
    staff_client.force_login(staff)
    staff_client.post(
        "/learners/new/",
        {
            "username": "ria.reader",
            "password": LEARNER_PASSWORD,
            "dob": "2009-03-27",
            "email": "ria@example.org",
            "first_name": "Ria",
            "last_name": "Reader",
        },
    )
    learner = Learner.objects.get(username="ria.reader")
    attempt = ready_to_send(client, learner)
    upstream.state.faults.add("submit-assessment", "503", times=1)
    client.post(attempt_url(attempt, "submit/"))  # waits to be sent
    staff_client.post(f"/operations/attempts/{attempt.pk}/retry/")
    attempt.refresh_from_db()
    assert attempt.state == State.COMPLETED
    session = attempt.session
    staff_client.get(f"/learners/{learner.pk}/")
    staff_client.get(f"/learners/{learner.pk}/attempts/{attempt.assessment_id}/")
    staff_client.post(
        f"/learners/{learner.pk}/password/",
        {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    staff_client.get(f"/learners/{learner.pk}/export/")
    learner.user.refresh_from_db()
    password_hash = learner.user.password
    # The result asks for a follow-up, which holds the records: the lead lifts it first.
    staff_client.post(f"/learners/{learner.pk}/erase/", {"lift": "yes", "lift-reason": "Done"})
    staff_client.post(f"/learners/{learner.pk}/erase/", {"erase": "yes"})

    actions = set(AuditEvent.objects.values_list("action", flat=True))
    assert actions == {
        Action.LEARNER_REGISTERED,
        Action.SUBMISSION_RETRIED,
        Action.RESULTS_VIEWED,
        Action.PASSWORD_RESET,
        Action.LEARNER_EXPORTED,
        Action.HOLD_LIFTED,
        Action.LEARNER_ERASED,
    }
    recorded = every_field_of_every_event()
    secrets = [LEARNER_PASSWORD, NEW_PASSWORD, settings.PARTNER_API_KEY, password_hash, session]
    assert all(secrets)
    assert not [secret for secret in secrets if secret in recorded]
    detail_keys = [key for event in AuditEvent.objects.all() for key in event.detail]
    assert not [key for key in detail_keys if "password" in key.lower()]
