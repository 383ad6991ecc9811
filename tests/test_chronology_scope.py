"""What a child's chronology holds (the follow-ups of concerns), and who may open it."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import StaffRole
from followups.models import FollowUp
from followups.services import followup_open_for_learner_request
from safeguarding.models import Alert
from schools.models import School, first_school_id
from tests.factories import make_learner, make_staff
from tests.journeys import page_showing

pytestmark = pytest.mark.django_db


def signed_in(user, school=None) -> Client:
    client = Client()
    client.force_login(user)
    if school is not None:
        session = client.session
        session["working_school"] = school.pk
        session.save()
    return client


def chronology_page(client, learner) -> str:
    return page_showing(
        client, f"/safeguarding/learners/{learner.pk}/", "<h1>Safeguarding chronology of"
    )


def asked(learner, **fields) -> Alert:
    raised = timezone.now() - timedelta(minutes=20)
    return Alert.objects.create(
        kind=Alert.Kind.ASKED,
        reason=Alert.Reason.ASKED,
        learner=learner,
        raised_at=raised,
        escalate_at=raised + timedelta(minutes=30),
        **fields,
    )


def changed(client, item: FollowUp, note: str) -> None:
    due = (timezone.localdate() + timedelta(days=3)).isoformat()
    response = client.post(
        f"/follow-ups/{item.pk}/",
        {"status": "contacted", "assignee": "", "due_date": due, "note": note},
    )
    assert response.status_code == 302


def test_only_the_follow_ups_of_concerns_join_the_chronology_each_named(staff, learner):
    client = signed_in(staff)
    routine = FollowUp.objects.create(
        learner=learner, risk_level="Low", due_date=timezone.localdate()
    )  # study skills
    concern = followup_open_for_learner_request(learner=learner)
    asked(learner, follow_up=concern)
    changed(client, routine, "Booked a study-skills session.")
    changed(client, concern, "Rang Mum.")

    page = chronology_page(client, learner)

    assert "Rang Mum." in page
    assert f"Follow-up #{concern.pk} (the pupil asked to talk)" in page
    assert "Booked a study-skills session." not in page
    assert f"Follow-up #{routine.pk}" not in page
    printed = page_showing(client, f"/safeguarding/learners/{learner.pk}/print/", "End of record.")
    assert "Rang Mum." in printed and "study-skills" not in printed


def test_a_priority_follow_up_joins_even_without_an_alert(staff, learner):
    client = signed_in(staff)
    item = FollowUp.objects.create(
        learner=learner, risk_level="High", priority=True, due_date=timezone.localdate()
    )
    changed(client, item, "Seen by the school nurse.")

    page = chronology_page(client, learner)

    assert f"Follow-up #{item.pk} (from a result)" in page and "school nurse" in page


@pytest.fixture
def bravo(db):
    return School.objects.create(code="BRAVO", name="Bravo Academy")


def test_a_trust_lead_reads_the_chronology_of_a_child_whose_alert_escalated_to_them(bravo):
    home = School.objects.get(pk=first_school_id())
    trust_lead = make_staff("tia.trust", role=StaffRole.TRUST_SAFEGUARDING_LEAD)
    escalated = make_learner("bea.bravo", "u-bea", school=bravo)
    alert = asked(escalated, escalated_at=timezone.now(), school=bravo)
    quiet = make_learner("bo.bravo", "u-bo", school=bravo)
    asked(quiet, school=bravo)  # not escalated: Bravo's own leads have it
    client = signed_in(trust_lead, home)
    assert f'href="/safeguarding/learners/{escalated.pk}/"' in page_showing(
        client, f"/safeguarding/alerts/{alert.pk}/", "Read the safeguarding chronology"
    )

    page = chronology_page(client, escalated)

    assert "A learner asked to talk to someone" in page
    assert client.get(f"/safeguarding/learners/{escalated.pk}/print/").status_code == 200
    assert client.get(f"/safeguarding/learners/{quiet.pk}/").status_code == 404
    assert client.get(f"/safeguarding/learners/{quiet.pk}/print/").status_code == 404
    # A school's own lead gains nothing from another school's escalation.
    home_lead = make_staff("hal.lead", role=StaffRole.DSL, school=home)
    assert signed_in(home_lead).get(f"/safeguarding/learners/{escalated.pk}/").status_code == 404
