"""What a child's chronology holds (the follow-ups of concerns), and who may open it."""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import StaffRole
from followups.models import FollowUp
from followups.services import followup_open_for_learner_request
from safeguarding.models import ChronologyEntry
from safeguarding.services import alert_acknowledge
from schools.models import School, first_school_id
from tests.factories import make_asked_alert, make_learner, make_staff, signed_in
from tests.journeys import page_showing

pytestmark = pytest.mark.django_db


def chronology_page(client, learner) -> str:
    return page_showing(
        client, f"/safeguarding/learners/{learner.pk}/", "<h1>Safeguarding chronology of"
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
    make_asked_alert(learner, follow_up=concern)
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
    alert = make_asked_alert(escalated, escalated_at=timezone.now(), school=bravo)
    quiet = make_learner("bo.bravo", "u-bo", school=bravo)
    make_asked_alert(quiet, school=bravo)  # not escalated: Bravo's own leads have it
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


def test_a_trust_lead_writes_in_an_escalated_child_s_record_and_other_trust_roles_cannot(bravo):
    home = School.objects.get(pk=first_school_id())
    trust_lead = make_staff("tia.trust", role=StaffRole.TRUST_SAFEGUARDING_LEAD)
    escalated = make_learner("bea.bravo", "u-bea", school=bravo)
    alert = make_asked_alert(escalated, escalated_at=timezone.now(), school=bravo)
    alert_acknowledge(
        alert=alert, by=trust_lead, address=None, action="Contacted home", category="wellbeing"
    )
    first = ChronologyEntry.objects.get(alert=alert)
    client = signed_in(trust_lead, home)
    record = f"/safeguarding/learners/{escalated.pk}/"

    noted = client.post(f"{record}notes/", {"text": "Rang Bravo's lead."})
    assert (noted.status_code, noted.url) == (302, record)
    note = ChronologyEntry.objects.get(learner=escalated, text="Rang Bravo's lead.")
    amended = client.post(f"/safeguarding/entries/{note.pk}/amend/", {"text": "Rang Bravo."})
    assert (amended.status_code, amended.url) == (302, record)
    note.refresh_from_db()
    assert note.text == "Rang Bravo." and note.edited_at is not None
    corrected = client.post(f"/safeguarding/entries/{first.pk}/correct/", {"text": "By email."})
    assert (corrected.status_code, corrected.url) == (302, record)
    assert ChronologyEntry.objects.get(corrects=first).text == "By email."
    acted = client.post(
        f"/safeguarding/alerts/{alert.pk}/actions/", {"action": "Spoke with the pupil"}
    )
    assert (acted.status_code, acted.url) == (302, f"/safeguarding/alerts/{alert.pk}/")
    assert ChronologyEntry.objects.filter(alert=alert, action="Spoke with the pupil").exists()
    assert "By email." in chronology_page(client, escalated)

    for role in (StaffRole.TRUST_ADMIN, StaffRole.TRUST_VIEWER):
        other = signed_in(make_staff(f"{role}.person", role=role), home)
        assert other.get(record).status_code == 404, role
        assert other.get(f"{record}print/").status_code == 404, role
        assert other.post(f"{record}notes/", {"text": "Not theirs."}).status_code == 404, role
    assert not ChronologyEntry.objects.filter(text="Not theirs.").exists()
