"""Taking a concern on: two leads at once, and a concern whose learner was erased."""

import pytest

from accounts.models import StaffRole
from safeguarding import views
from safeguarding.entries import NoChronology, entry_add_action
from safeguarding.models import Alert, ChronologyEntry
from safeguarding.services import alert_acknowledge
from tests.factories import make_asked_alert, make_staff, signed_in
from tests.journeys import page_showing

pytestmark = pytest.mark.django_db

TAKEN_ON = {
    "action": "Spoke with the pupil",
    "category": "bullying",
    "note": "Lee says older pupils take his lunch money.",
}


@pytest.fixture
def deputy(db):
    return make_staff("dee.deputy", role=StaffRole.DEPUTY_DSL)


def test_a_second_lead_taking_it_on_at_once_adds_their_action_to_the_chronology(
    staff, deputy, learner
):
    alert = make_asked_alert(learner)
    staff.first_name, staff.last_name = "Sam", "Okafor"
    staff.save()
    # The first lead took it on, with no category yet, while the deputy's page was open.
    alert_acknowledge(alert=alert, by=staff, address=None, action="Contacted home")

    response = signed_in(deputy).post(
        f"/safeguarding/alerts/{alert.pk}/acknowledge/", TAKEN_ON, follow=True
    )

    assert response.status_code == 200
    assert (
        "Sam Okafor had already taken this alert on; your action was added to the chronology"
        in response.text
    )
    theirs = ChronologyEntry.objects.get(author=deputy)
    assert (theirs.alert, theirs.action) == (alert, "Spoke with the pupil")
    assert theirs.text == TAKEN_ON["note"]
    alert.refresh_from_db()
    assert alert.acknowledged_by == staff and alert.category == Alert.Category.BULLYING


def test_the_first_lead_s_category_stands_when_a_second_takes_it_on(staff, deputy, learner):
    alert = make_asked_alert(learner)
    alert_acknowledge(
        alert=alert, by=staff, address=None, action="Contacted home", category="family"
    )

    signed_in(deputy).post(f"/safeguarding/alerts/{alert.pk}/acknowledge/", TAKEN_ON)

    alert.refresh_from_db()
    assert alert.category == "family"
    assert ChronologyEntry.objects.filter(author=deputy, action="Spoke with the pupil").exists()


def test_a_second_lead_s_unfinished_form_comes_back_with_what_they_typed(staff, deputy, learner):
    alert = make_asked_alert(learner)
    alert_acknowledge(alert=alert, by=staff, address=None, action="Contacted home")

    response = signed_in(deputy).post(
        f"/safeguarding/alerts/{alert.pk}/acknowledge/", {**TAKEN_ON, "action": ""}
    )

    assert response.status_code == 200 and "Choose what was done." in response.text
    assert "take his lunch money" in response.text
    assert not ChronologyEntry.objects.filter(author=deputy).exists()


def test_the_same_lead_sending_twice_records_their_action_once(staff, learner):
    alert = make_asked_alert(learner)
    client = signed_in(staff)
    for _ in range(2):
        client.post(f"/safeguarding/alerts/{alert.pk}/acknowledge/", TAKEN_ON)
    assert ChronologyEntry.objects.filter(action="Spoke with the pupil").count() == 1


def erased_link(alert: Alert) -> None:
    Alert.objects.filter(pk=alert.pk).update(learner=None)


def test_a_concern_whose_learner_was_erased_is_acknowledged_without_an_action(staff, learner):
    alert = make_asked_alert(learner)
    erased_link(alert)
    client = signed_in(staff)
    page = page_showing(client, f"/safeguarding/alerts/{alert.pk}/", "Take this on")
    assert "there is nowhere to record an action" in page
    assert 'name="action"' not in page and 'name="category"' not in page

    response = client.post(f"/safeguarding/alerts/{alert.pk}/acknowledge/", follow=True)

    assert response.status_code == 200 and "Alert acknowledged" in response.text
    alert.refresh_from_db()
    assert alert.acknowledged_by == staff
    late = client.post(
        f"/safeguarding/alerts/{alert.pk}/actions/", {"action": "Contacted home"}, follow=True
    )
    assert late.status_code == 200 and "there is nowhere to record the action" in late.text
    assert "Acknowledge the alert first" not in late.text


def test_an_erasure_between_reading_and_saving_an_action_is_said_plainly(
    staff, learner, monkeypatch
):
    alert = make_asked_alert(learner)
    alert_acknowledge(alert=alert, by=staff, address=None, action="Contacted home")
    read = views._alert_of

    def erased_meanwhile(request, pk):
        found = read(request, pk)
        erased_link(found)  # the page's copy still names the learner
        return found

    monkeypatch.setattr(views, "_alert_of", erased_meanwhile)

    response = signed_in(staff).post(
        f"/safeguarding/alerts/{alert.pk}/actions/", {"action": "Monitoring in school"}, follow=True
    )

    assert response.status_code == 200
    assert "there is nowhere to record the action" in response.text
    assert not ChronologyEntry.objects.filter(action="Monitoring in school").exists()
    with pytest.raises(NoChronology):
        entry_add_action(alert=alert, by=staff, action="Monitoring in school")
