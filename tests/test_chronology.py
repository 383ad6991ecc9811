"""A child's safeguarding chronology: taking a concern on, later actions, follow-ups, access."""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import StaffRole
from audit.models import AuditEvent
from followups.models import FollowUp, FollowUpHistory
from followups.services import followup_open_for_learner_request
from safeguarding.models import Alert, ChronologyEntry
from schools.models import PartnerSettings, School
from tests.factories import make_group, make_learner, make_staff, put_in_group, signed_in
from tests.journeys import page_showing

pytestmark = pytest.mark.django_db

TAKEN_ON = {
    "action": "Spoke with the pupil",
    "category": "bullying",
    "note": "Lee says older pupils take his lunch money.",
}


@pytest.fixture
def lead(staff):
    staff.first_name, staff.last_name = "Sam", "Lead"
    staff.save(update_fields=["first_name", "last_name"])
    return staff


def asked(learner, *, minutes_ago: int = 60) -> Alert:
    """Return the alert of a pupil who asked to talk to someone, with its follow-up."""
    raised = timezone.now() - timedelta(minutes=minutes_ago)
    return Alert.objects.create(
        kind=Alert.Kind.ASKED,
        reason=Alert.Reason.ASKED,
        learner=learner,
        follow_up=followup_open_for_learner_request(learner=learner),
        raised_at=raised,
        escalate_at=raised + timedelta(minutes=30),
    )


def chronology_page(client, learner) -> str:
    path = f"/safeguarding/learners/{learner.pk}/"
    return page_showing(client, path, "<h1>Safeguarding chronology of")


def test_taking_a_concern_on_records_action_category_and_note_with_who_and_when(lead, learner):
    alert = asked(learner)
    client = signed_in(lead)

    response = client.post(f"/safeguarding/alerts/{alert.pk}/acknowledge/", TAKEN_ON, follow=True)

    assert response.status_code == 200 and "Alert acknowledged" in response.content.decode()
    alert.refresh_from_db()
    assert alert.acknowledged_by == lead and alert.category == Alert.Category.BULLYING
    entry = ChronologyEntry.objects.get(learner=learner)
    assert (entry.alert, entry.action, entry.author) == (alert, "Spoke with the pupil", lead)
    page = chronology_page(client, learner)
    assert "Concern taken on" in page and "Category: Bullying or peer-on-peer abuse" in page
    assert "Spoke with the pupil" in page and "older pupils take his lunch money" in page
    assert "by Sam Lead" in page
    stamp = timezone.localtime(entry.created_at).strftime("%Y-%m-%dT%H:%M")
    assert f'datetime="{stamp}' in page
    assert "A learner asked to talk to someone" in page  # the raising, by the pupil
    assert "by the pupil" in page


def test_the_raising_says_what_the_pupil_chose_and_what_a_result_said(lead, learner):
    alert = asked(learner, minutes_ago=10)
    Alert.objects.filter(pk=alert.pk).update(urgent=True, about="home", wanted_contact="Mrs Khan")
    now = timezone.now()
    Alert.objects.create(
        kind=Alert.Kind.RESULT,
        reason=Alert.Reason.PRIORITY,
        learner=learner,
        values=[{"field": "needs_help", "value": "Yes - priority", "reason": "priority"}],
        raised_at=now - timedelta(days=3),
        escalate_at=now,
    )

    page = chronology_page(signed_in(lead), learner)

    assert "do not feel safe right now (urgent)" in page and "About: Home or family" in page
    assert "Would like to talk to: Mrs Khan" in page
    assert "Priority value" in page and "Needs help: “Yes - priority”" in page
    assert page.index("Mrs Khan") < page.index("Priority value")  # newest first


def test_taking_a_concern_on_without_an_action_says_so_and_keeps_what_was_typed(lead, learner):
    alert = asked(learner)

    response = signed_in(lead).post(
        f"/safeguarding/alerts/{alert.pk}/acknowledge/", {**TAKEN_ON, "action": ""}
    )

    page = response.content.decode()
    assert response.status_code == 200 and 'class="error-summary"' in page
    assert "Choose what was done." in page
    assert 'value="bullying" selected' in page and "take his lunch money" in page
    alert.refresh_from_db()
    assert alert.acknowledged_at is None and alert.category == ""
    assert not ChronologyEntry.objects.exists()
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.ALERT_ACKNOWLEDGED).exists()


def test_a_concern_needs_its_category_but_a_test_alert_needs_nothing(lead, learner):
    alert = asked(learner)
    client = signed_in(lead)
    missing = client.post(
        f"/safeguarding/alerts/{alert.pk}/acknowledge/", {**TAKEN_ON, "category": ""}
    )
    assert missing.status_code == 200 and "Choose the category of concern." in missing.text
    now = timezone.now()
    test = Alert.objects.create(
        kind=Alert.Kind.TEST, reason=Alert.Reason.TEST, raised_at=now, escalate_at=now
    )

    done = client.post(f"/safeguarding/alerts/{test.pk}/acknowledge/", follow=True)

    assert done.status_code == 200 and "Alert acknowledged" in done.text
    test.refresh_from_db()
    alert.refresh_from_db()
    assert test.acknowledged_by == lead and alert.acknowledged_at is None


def test_the_school_s_own_actions_are_offered_after_the_usual_ones(lead, learner):
    partner = PartnerSettings.load()
    partner.safeguarding_actions = "Spoke with the form tutor\n\n  Played it down  \n"
    partner.save()  # dropped from the cache when saved
    alert = asked(learner)
    page = page_showing(signed_in(lead), f"/safeguarding/alerts/{alert.pk}/", "Take this on")
    usual, own = page.index("No further action</option>"), page.index("Spoke with the form tutor")
    assert usual < own < page.index(">Played it down</option>")

    signed_in(lead).post(
        f"/safeguarding/alerts/{alert.pk}/acknowledge/",
        {**TAKEN_ON, "action": "Spoke with the form tutor"},
    )
    assert ChronologyEntry.objects.get().action == "Spoke with the form tutor"


def test_the_settings_page_keeps_the_school_s_actions(superuser):
    client = signed_in(superuser)
    page = page_showing(client, "/settings/", "Your school&#x27;s own safeguarding actions")
    assert 'name="safeguarding_actions"' in page
    client.post("/settings/", {"safeguarding_actions": "Spoke with the form tutor"})
    assert PartnerSettings.current().safeguarding_actions == "Spoke with the form tutor"
    client.post("/settings/", {"retention_years": "4"})  # left out: kept
    assert PartnerSettings.current().safeguarding_actions == "Spoke with the form tutor"


def test_a_later_action_joins_the_same_concern(lead, learner):
    alert = asked(learner)
    client = signed_in(lead)
    client.post(f"/safeguarding/alerts/{alert.pk}/acknowledge/", TAKEN_ON)
    page = page_showing(client, f"/safeguarding/alerts/{alert.pk}/", "Add an action")

    response = client.post(
        f"/safeguarding/alerts/{alert.pk}/actions/",
        {"action": "Contacted home", "note": "Mum will talk to him tonight."},
        follow=True,
    )

    assert response.status_code == 200 and "Action added to the chronology" in response.text
    later = ChronologyEntry.objects.get(action="Contacted home")
    assert later.alert == alert and later.category == Alert.Category.BULLYING
    page = chronology_page(client, learner)
    assert page.index("Mum will talk to him tonight") < page.index("take his lunch money")
    empty = client.post(f"/safeguarding/alerts/{alert.pk}/actions/", {"note": "kept words"})
    assert empty.status_code == 200 and "Choose what was done." in empty.text
    assert "kept words" in empty.text and ChronologyEntry.objects.count() == 2


def test_a_follow_up_s_changes_and_notes_join_the_chronology_newest_first(lead, learner):
    alert = asked(learner, minutes_ago=90)
    client = signed_in(lead)
    client.post(f"/safeguarding/alerts/{alert.pk}/acknowledge/", TAKEN_ON)
    item = alert.follow_up
    due = (timezone.localdate() + timedelta(days=3)).isoformat()

    client.post(
        f"/follow-ups/{item.pk}/",
        {"status": "contacted", "assignee": lead.pk, "due_date": due, "note": "Rang Mum."},
    )
    client.post(f"/follow-ups/{item.pk}/", {"status": "resolved", "assignee": "", "due_date": due})

    item.refresh_from_db()
    assert item.resolved_at is not None
    history = FollowUpHistory.objects.filter(follow_up=item).order_by("created_at")
    assert history[0].changed_by == lead
    assert {"field": "status", "from": "New", "to": "Contacted"} in history[0].changes
    assert {"field": "assignee", "from": "", "to": "Sam Lead"} in history[0].changes
    assert history[1].changes[0] == {"field": "status", "from": "Contacted", "to": "Resolved"}
    page = chronology_page(client, learner)
    order = [
        page.index("Status: Contacted → Resolved"),
        page.index("Rang Mum."),  # saved with the change, just after it
        page.index("Status: New → Contacted"),
        page.index("take his lunch money"),
        page.index("A learner asked to talk to someone"),
    ]
    assert order == sorted(order)
    assert "Follow-up note" in page and "Follow-up changed" in page

    client.post(f"/follow-ups/{item.pk}/", {"status": "contacted", "assignee": "", "due_date": due})
    item.refresh_from_db()
    assert item.status == FollowUp.Status.CONTACTED and item.resolved_at is None


def test_the_learner_record_links_the_chronology_for_the_leads_only(lead, learner):
    group = make_group("10A")
    put_in_group(group, learner)
    record = f"/learners/{learner.pk}/"
    link = f'href="/safeguarding/learners/{learner.pk}/"'
    assert link in page_showing(signed_in(lead), record, "Date of birth")
    admin = make_staff("ada.admin", role=StaffRole.ADMIN)
    teacher = make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[group])
    for person in (admin, teacher):
        assert link not in page_showing(signed_in(person), record, "Date of birth")


def test_staff_who_are_not_leads_find_no_chronology(lead, learner):
    entry = ChronologyEntry.objects.create(learner=learner, text="x", author_name="Sam Lead")
    year = make_group("Year 10")
    put_in_group(year, learner)
    people = [
        make_staff("ada.admin", role=StaffRole.ADMIN),
        make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[year]),
        make_staff("hugo.hoy", role=StaffRole.HEAD_OF_YEAR, groups=[year]),
    ]
    for person in people:
        client = signed_in(person)
        for path in [
            f"/safeguarding/learners/{learner.pk}/",
            f"/safeguarding/learners/{learner.pk}/print/",
            f"/safeguarding/entries/{entry.pk}/correct/",
        ]:
            assert client.get(path).status_code == 404, (person, path)
        note = client.post(f"/safeguarding/learners/{learner.pk}/notes/", {"text": "y"})
        assert note.status_code == 404
    assert ChronologyEntry.objects.count() == 1
    assert chronology_page(signed_in(lead), learner)  # the lead does see it


def test_a_lead_of_another_school_finds_no_chronology_there(lead):
    bravo = School.objects.create(code="BRAVO", name="Bravo Academy")
    theirs = make_learner("bea.bravo", "u-bea", school=bravo)
    entry = ChronologyEntry.objects.create(
        school=bravo, learner=theirs, text="Bravo own note", author_name="Bo"
    )
    client = signed_in(lead)
    for path in [
        f"/safeguarding/learners/{theirs.pk}/",
        f"/safeguarding/learners/{theirs.pk}/print/",
        f"/safeguarding/entries/{entry.pk}/correct/",
    ]:
        response = client.get(path)
        assert response.status_code == 404 and "Bravo own note" not in response.text
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.CHRONOLOGY_PRINTED).exists()
    bravo_lead = make_staff("bo.lead", school=bravo)
    page = chronology_page(signed_in(bravo_lead), theirs)
    assert "Bravo own note" in page
