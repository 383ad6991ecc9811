"""A child's safeguarding record: amended only within a day, corrected by new entries, printed."""

from datetime import timedelta

import pytest
from django.utils import timezone

from audit.models import AuditEvent
from safeguarding.entries import entry_add_note
from safeguarding.models import ChronologyEntry
from tests.factories import make_staff, signed_in
from tests.journeys import page_showing

pytestmark = pytest.mark.django_db

Action = AuditEvent.Action


@pytest.fixture
def lead(staff):
    staff.first_name, staff.last_name = "Sam", "Lead"
    staff.save(update_fields=["first_name", "last_name"])
    return staff


def noted(client, learner, text: str) -> ChronologyEntry:
    """Add a note through the chronology page; return it."""
    response = client.post(f"/safeguarding/learners/{learner.pk}/notes/", {"text": text})
    assert response.status_code == 302
    return ChronologyEntry.objects.get(text=text)


def written_ago(monkeypatch, lead, learner, ago: timedelta) -> ChronologyEntry:
    """Return a note the lead wrote `ago` before now, on a clock moved back to then."""
    then = timezone.now() - ago
    with monkeypatch.context() as moved:
        moved.setattr(timezone, "now", lambda: then)
        entry = entry_add_note(learner=learner, by=lead, text="Seen crying at break.")
    assert entry.created_at == then
    return entry


def chronology(client, learner) -> str:
    return page_showing(client, f"/safeguarding/learners/{learner.pk}/", "Add a note")


def test_an_author_amends_their_entry_within_a_day(lead, learner, monkeypatch):
    client = signed_in(lead)
    entry = written_ago(monkeypatch, lead, learner, timedelta(hours=23, minutes=59))
    amend = f"/safeguarding/entries/{entry.pk}/amend/"
    assert f'href="{amend}"' in chronology(client, learner)
    assert "Seen crying at break." in page_showing(client, amend, "<h1>Amend your entry</h1>")

    response = client.post(amend, {"text": "Seen crying at lunch."}, follow=True)

    assert response.status_code == 200 and "Entry amended." in response.text
    entry.refresh_from_db()
    assert entry.text == "Seen crying at lunch."
    assert timezone.now() - timedelta(minutes=1) < entry.edited_at <= timezone.now()
    assert "Amended by its author at" in response.text


def test_every_amendment_keeps_the_earlier_words_and_is_audited_without_them(
    lead, learner, monkeypatch
):
    client = signed_in(lead)
    entry = written_ago(monkeypatch, lead, learner, timedelta(hours=2))
    amend = f"/safeguarding/entries/{entry.pk}/amend/"
    client.post(amend, {"text": "Seen crying at lunch."})

    response = client.post(amend, {"text": "Seen crying at lunch, alone."}, follow=True)

    page = response.text
    assert response.status_code == 200 and "Seen crying at lunch, alone." in page
    assert page.count("; earlier words:") == 2
    # One line per amendment, saying who and when, not a second "amended" line beside it.
    assert page.count("Amended by its author at") == 2
    assert "earlier words: “Seen crying at break.”" in page
    assert "earlier words: “Seen crying at lunch.”" in page
    printed = page_showing(client, f"/safeguarding/learners/{learner.pk}/print/", "End of record")
    assert "earlier words: “Seen crying at break.”" in printed
    events = AuditEvent.objects.filter(action=Action.CHRONOLOGY_AMENDED)
    assert events.count() == 2
    event = events.first()
    assert event.actor == lead and event.learner == learner
    assert event.detail["entry"] == entry.pk and "crying" not in str(event.detail)


def test_after_a_day_an_entry_cannot_be_amended_only_corrected(lead, learner, monkeypatch):
    client = signed_in(lead)
    entry = written_ago(monkeypatch, lead, learner, timedelta(hours=24, minutes=1))
    amend = f"/safeguarding/entries/{entry.pk}/amend/"
    page = chronology(client, learner)
    assert f'href="/safeguarding/entries/{entry.pk}/correct/"' in page
    assert f'href="{amend}"' not in page

    response = client.post(amend, {"text": "Rewritten."}, follow=True)

    assert response.status_code == 200 and "can no longer be changed" in response.text
    entry.refresh_from_db()
    assert entry.text == "Seen crying at break." and entry.edited_at is None
    assert "can no longer be changed" in client.get(amend, follow=True).text


def test_words_typed_as_the_day_ran_out_come_back_as_a_correction(lead, learner, monkeypatch):
    client = signed_in(lead)
    # The amend page was opened in time; the day ran out while the author typed.
    entry = written_ago(monkeypatch, lead, learner, timedelta(hours=24, seconds=1))

    response = client.post(
        f"/safeguarding/entries/{entry.pk}/amend/", {"text": "Seen crying at lunch, alone."}
    )

    page = response.text
    assert response.status_code == 200 and "<h1>Add a correction</h1>" in page
    assert "the day for amending it passed while you wrote" in page
    assert "Seen crying at lunch, alone.</textarea>" in page
    assert f'action="/safeguarding/entries/{entry.pk}/correct/"' in page
    entry.refresh_from_db()
    assert entry.text == "Seen crying at break." and entry.edited_at is None


def test_nobody_amends_another_lead_s_entry(lead, learner):
    entry = noted(signed_in(lead), learner, "Seen crying at break.")
    deputy = signed_in(make_staff("dee.deputy"))
    assert f"/safeguarding/entries/{entry.pk}/amend/" not in chronology(deputy, learner)

    response = deputy.post(f"/safeguarding/entries/{entry.pk}/amend/", {"text": "Mine now."})

    assert response.status_code == 302
    entry.refresh_from_db()
    assert entry.text == "Seen crying at break."


def test_a_correction_is_a_new_entry_linked_both_ways(lead, learner):
    client = signed_in(lead)
    entry = noted(client, learner, "Spoke with Mr Jones.")
    correct = f"/safeguarding/entries/{entry.pk}/correct/"
    assert "Spoke with Mr Jones." in page_showing(client, correct, "<h1>Add a correction</h1>")
    empty = client.post(correct, {"text": ""})
    assert empty.status_code == 200 and "Write what the correction is." in empty.text

    response = client.post(correct, {"text": "It was Mrs Jones, not Mr Jones."}, follow=True)

    assert response.status_code == 200 and "Correction added" in response.text
    correction = ChronologyEntry.objects.get(kind=ChronologyEntry.Kind.CORRECTION)
    assert correction.corrects == entry and correction.author == lead
    entry.refresh_from_db()
    assert entry.text == "Spoke with Mr Jones."  # the original stands
    page = response.text
    assert f'id="entry-{correction.pk}"' in page and f'href="#entry-{entry.pk}"' in page
    assert f'href="#entry-{correction.pk}"' in page
    assert page.index("It was Mrs Jones") < page.index("Spoke with Mr Jones.")


def test_an_empty_note_is_refused_with_the_reason(lead, learner):
    response = signed_in(lead).post(f"/safeguarding/learners/{learner.pk}/notes/", {"text": " "})
    assert response.status_code == 200 and "Write the note." in response.text
    assert 'class="error-summary"' in response.text
    assert not ChronologyEntry.objects.exists()


def test_printing_the_record_is_audited_and_shows_who_printed_it(lead, learner):
    client = signed_in(lead)
    noted(client, learner, "Seen crying at break.")

    page = page_showing(
        client,
        f"/safeguarding/learners/{learner.pk}/print/",
        "Confidential: child protection record",
    )

    event = AuditEvent.objects.get(action=Action.CHRONOLOGY_PRINTED)
    assert event.actor == lead and event.learner == learner and event.detail["entries"] == 1
    assert learner.display_name in page and "17 May 2010" in page  # name and date of birth
    assert "Printed by</dt><dd>Sam Lead" in page and "Seen crying at break." in page
    assert "css/safeguarding_record.css" in page
    assert "Add a correction" not in page and "Add a note" not in page


def test_reading_the_chronology_is_audited(lead, learner):
    chronology(signed_in(lead), learner)
    event = AuditEvent.objects.get(action=Action.CHRONOLOGY_VIEWED)
    assert event.actor == lead and event.learner == learner
    assert not AuditEvent.objects.filter(action=Action.CHRONOLOGY_PRINTED).exists()


def test_each_showing_of_the_chronology_is_audited_once(lead, learner):
    client = signed_in(lead)
    viewed = AuditEvent.objects.filter(action=Action.CHRONOLOGY_VIEWED)
    chronology(client, learner)
    assert viewed.count() == 1

    refused = client.post(f"/safeguarding/learners/{learner.pk}/notes/", {"text": ""})

    assert refused.status_code == 200 and "Write the note." in refused.text
    assert viewed.count() == 2  # the page shown again with the reason is a reading too
    noted(client, learner, "Seen crying at break.")  # redirected: nothing shown yet
    assert viewed.count() == 2
