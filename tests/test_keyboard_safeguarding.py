"""A lead writes a child's safeguarding record with the keyboard alone (Tab, Enter, arrows).

A later action on a concern already taken on; a note, an amendment and a correction on the
chronology; and the printed record, reached from its link. Text is typed into the focused
field; nothing is clicked.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from safeguarding.models import Alert, ChronologyEntry
from safeguarding.services import alert_acknowledge
from tests.factories import PASSWORD
from tests.keyboard_support import (
    describe,
    focus_is,
    focused,
    press,
    press_and_load,
    sign_in_with_keyboard,
    tab_to_next,
    tab_until,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def taken_on(learner, lead) -> Alert:
    """Return a learner's request to talk that the lead has already taken on."""
    raised = timezone.now() - timedelta(minutes=20)
    alert = Alert.objects.create(
        kind=Alert.Kind.ASKED,
        reason=Alert.Reason.ASKED,
        learner=learner,
        raised_at=raised,
        escalate_at=raised + timedelta(minutes=30),
    )
    alert_acknowledge(
        alert=alert, by=lead, address=None, action="Contacted home", category="wellbeing"
    )
    return alert


def tab_to_text_box(page, selector: str, where: str, limit: int = 40) -> None:
    """Tab to a text box; its focus shows and the line being typed on is on screen.

    Chromium reveals a focused text box's caret, not the whole box: on a phone a tall box
    low on the page is focused with its first lines in view and the rest below, which
    test_keyboard's stricter "wholly on screen" check would count as off screen.
    """
    for _ in range(limit):
        if focus_is(page, selector):
            break
        page.keyboard.press("Tab")
    focus = focused(page)
    assert focus_is(page, selector), f"{where}: Tab never reached {selector}"
    assert focus["focusVisible"], f"{where}: {describe(focus)} does not show its focus"
    assert focus["top"] >= 0 and focus["top"] + 40 <= focus["viewHeight"], (
        f"{where}: the first line of {describe(focus)} is off screen ({focus['top']:.0f})"
    )


def signed_in_page(browser, live_server, user, viewport):
    page = browser.new_page(viewport=viewport)
    page.goto(live_server.url + "/accounts/login/")
    sign_in_with_keyboard(page, user.username, PASSWORD)
    return page


def test_a_lead_adds_an_action_to_a_concern_taken_on_with_the_keyboard_alone(
    browser, live_server, staff, learner, viewport
):
    alert = taken_on(learner, staff)
    page = signed_in_page(browser, live_server, staff, viewport)
    page.goto(live_server.url + f"/safeguarding/alerts/{alert.pk}/")

    where = "an alert taken on"
    tab_until(page, "#id_action", where)
    press(page, "ArrowDown", where)
    press(page, "ArrowDown", where)  # past "Will speak with the pupil": it was done
    assert page.input_value("#id_action") == "Spoke with the pupil"
    tab_to_next(page, "#id_note", where)
    page.keyboard.type("Checked in after lunch.")
    tab_to_next(page, "main form button[type=submit]", where)
    press_and_load(page)

    assert "Action added to the chronology." in page.inner_text(".messages")
    added = ChronologyEntry.objects.get(alert=alert, action="Spoke with the pupil")
    assert added.text == "Checked in after lunch." and added.author == staff
    page.close()


def test_a_lead_notes_amends_corrects_and_prints_the_chronology_with_the_keyboard_alone(
    browser, live_server, staff, learner, viewport
):
    page = signed_in_page(browser, live_server, staff, viewport)
    page.goto(live_server.url + f"/safeguarding/learners/{learner.pk}/")

    where = "the chronology"
    tab_until(page, "#id_text", where)
    page.keyboard.type("Seen crying at break.")
    tab_to_next(page, "main form button[type=submit]", where)
    press_and_load(page)
    assert "Note added to the chronology." in page.inner_text(".messages")
    note = ChronologyEntry.objects.get(learner=learner, text="Seen crying at break.")

    tab_until(page, f"main a[href$='/entries/{note.pk}/amend/']", where, limit=80)
    press_and_load(page)
    where = "amending the note"
    tab_to_text_box(page, "#id_text", where)
    page.keyboard.press("Control+A")
    page.keyboard.type("Seen crying at lunch, alone.")
    tab_to_next(page, "main form button[type=submit]", where)
    press_and_load(page)
    assert "Entry amended." in page.inner_text(".messages")
    note.refresh_from_db()
    assert note.text == "Seen crying at lunch, alone." and note.edited_at is not None

    where = "the chronology, amended"
    tab_until(page, f"main a[href$='/entries/{note.pk}/correct/']", where, limit=80)
    press_and_load(page)
    where = "correcting the note"
    tab_to_text_box(page, "#id_text", where)
    page.keyboard.type("It was the day before.")
    tab_to_next(page, "main form button[type=submit]", where)
    press_and_load(page)
    assert "Correction added to the chronology." in page.inner_text(".messages")
    correction = ChronologyEntry.objects.get(corrects=note)
    assert correction.text == "It was the day before."

    where = "the chronology, corrected"
    tab_until(page, "main a[href$='/print/']", where, limit=80)
    assert focus_is(page, "main a.button")
    press_and_load(page)
    assert page.url.endswith(f"/safeguarding/learners/{learner.pk}/print/")
    assert "Confidential: child protection record" in page.content()
    assert "It was the day before." in page.inner_text("main")
    page.close()
