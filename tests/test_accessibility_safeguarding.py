"""The safeguarding and privacy states beyond test_accessibility.py's pass axe at both widths.

The chronology and its printed record once an entry is amended and another corrects it, the
correction form a late amendment becomes, the alert page for a test alert, an erased learner
and a lead who was beaten to it, the talk pages of a primary pupil and a plain request, and
the hold page in each of its wordings. The pages are URL names test_accessibility.py
already reaches (its coverage check counts those); these are their further states.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import StaffRole
from learners.models import Learner
from partner_api.levels import Level
from privacy.holds import records_hold_place
from safeguarding.entries import entry_add_note
from safeguarding.models import Alert, ChronologyEntry
from safeguarding.services import alert_acknowledge
from tests.browsing import browser_sign_in, violations
from tests.factories import make_asked_alert, make_learner, make_staff

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def assert_accessible(page, state: str) -> None:
    problems = violations(page)
    assert not problems, f"{state} ({page.url}):\n  " + "\n  ".join(problems)


def sign_in(browser, live_server, user, viewport):
    page = browser.new_page(viewport=viewport)
    browser_sign_in(page, live_server.url, user.username)
    return page


def submit(page, selector: str = "main form button[type=submit]") -> None:
    page.click(selector)
    page.wait_for_load_state()


def asked(learner, **fields) -> Alert:
    """Raise a learner's request to talk five minutes ago, waiting for a lead."""
    return make_asked_alert(learner, minutes_ago=5, **fields)


def test_the_chronology_and_its_record_pass_axe_amended_and_corrected(
    browser, live_server, staff, learner, viewport
):
    entry = entry_add_note(learner=learner, by=staff, text="Seen crying at break.")
    base = live_server.url
    page = sign_in(browser, live_server, staff, viewport)

    page.goto(base + f"/safeguarding/entries/{entry.pk}/amend/")
    page.fill("#id_text", "Seen crying at lunch, alone.")
    submit(page)
    assert "Entry amended." in page.inner_text(".messages")
    main = page.inner_text("main")
    assert "Amended by its author" in main and "earlier words" in main
    assert_accessible(page, "the chronology, an entry amended, with a message")

    page.goto(base + f"/safeguarding/entries/{entry.pk}/correct/")
    page.fill("#id_text", "It was the day before.")
    submit(page)
    assert "Correction added to the chronology." in page.inner_text(".messages")
    main = page.inner_text("main")
    assert "Corrects the entry of" in main and "Corrected by" in main
    assert_accessible(page, "the chronology, an entry corrected, with a message")

    page.goto(base + f"/safeguarding/learners/{learner.pk}/print/")
    main = page.inner_text("main")
    assert "Confidential: child protection record" in page.content()
    assert "earlier words" in main and "Corrects the entry of" in main and "Corrected by" in main
    assert_accessible(page, "the printed record, an entry amended and corrected")

    # The amend page was opened in time; the day ran out while the author typed.
    late = entry_add_note(learner=learner, by=staff, text="Quiet in class.")
    page.goto(base + f"/safeguarding/entries/{late.pk}/amend/")
    page.fill("#id_text", "Quiet in class, then cheerful.")
    ChronologyEntry.objects.filter(pk=late.pk).update(
        created_at=timezone.now() - timedelta(hours=25)
    )
    submit(page)
    assert "the day for amending it passed while you wrote" in page.inner_text(".messages")
    assert page.input_value("#id_text") == "Quiet in class, then cheerful."
    assert page.url.endswith(f"/entries/{late.pk}/amend/")
    assert_accessible(page, "an amendment too late, offered as a correction with its words")
    page.close()


def test_the_alert_page_passes_axe_for_a_test_alert_an_erased_learner_and_a_lead_beaten_to_it(
    browser, live_server, staff, learner, viewport
):
    now = timezone.now()
    test = Alert.objects.create(
        kind=Alert.Kind.TEST,
        reason=Alert.Reason.TEST,
        raised_at=now,
        escalate_at=now,
        test_recipient=staff,
    )
    erased = asked(None)
    taken = asked(learner)
    deputy = make_staff("dee.deputy", role=StaffRole.DEPUTY_DSL)
    base = live_server.url
    page = sign_in(browser, live_server, staff, viewport)

    page.goto(base + f"/safeguarding/alerts/{test.pk}/")
    assert page.is_visible("text=Acknowledge the test alert")
    assert_accessible(page, "a test alert, waiting")
    submit(page)
    assert "Alert acknowledged" in page.inner_text(".messages")
    assert_accessible(page, "a test alert, acknowledged")

    page.goto(base + f"/safeguarding/alerts/{erased.pk}/")
    assert "personal data was erased" in page.inner_text("main")
    assert_accessible(page, "an alert whose learner was erased, waiting")
    alert_acknowledge(alert=erased, by=staff, address=None)
    page.reload()
    assert "Not yet" not in page.inner_text("main")
    assert_accessible(page, "an alert whose learner was erased, acknowledged")

    page.goto(base + f"/safeguarding/alerts/{taken.pk}/")
    page.select_option("#id_action", "Spoke with the pupil")
    page.select_option("#id_category", "wellbeing")
    # Another lead takes it on while this page is open.
    alert_acknowledge(alert=taken, by=deputy, address=None, action="Contacted home")
    submit(page)
    assert "had already taken this alert on" in page.inner_text(".messages")
    assert_accessible(page, "an alert another lead had already taken on, with the message")
    page.close()


def test_the_talk_pages_pass_axe_for_a_primary_pupil_and_a_plain_request(
    browser, live_server, learner, viewport
):
    base = live_server.url
    page = sign_in(browser, live_server, learner.user, viewport)
    page.goto(base + "/me/talk/")
    page.check("#id_about_0")
    submit(page)
    main = page.inner_text("main")
    assert "We have told the staff" in main and "You asked already" not in main
    assert page.locator("main a[href='tel:999']").count() == 0
    assert_accessible(page, "the staff have been told, a new plain request")
    page.close()

    for name, unsafe in (("pip.primary", False), ("pia.primary", True)):
        pupil = make_learner(name, f"u-{name}")
        Learner.objects.filter(pk=pupil.pk).update(level=Level.PRIMARY)
        page = sign_in(browser, live_server, pupil.user, viewport)
        page.goto(base + "/me/talk/")
        assert "Any grown-up at school" in page.inner_text("main")
        assert_accessible(page, "I want to talk to someone, a primary pupil")
        if unsafe:
            page.check("#id_unsafe")
        else:
            page.check("#id_about_0")
        submit(page)
        main = page.inner_text("main")
        if unsafe:
            assert "tell a grown-up near you now" in main
            assert_accessible(page, "a primary pupil told to find a grown-up now")
        else:
            assert "It might not be today" in main
            assert_accessible(page, "a primary pupil's plain request sent")
        page.close()


def test_the_hold_page_passes_axe_in_each_wording(browser, live_server, staff, viewport):
    by_alert = make_learner("hal.held", "u-hal")
    no_birthday = make_learner("nod.held", "u-nod")
    Learner.objects.filter(pk=no_birthday.pk).update(dob=None)
    placed = make_learner("pat.placed", "u-pat")
    for pupil in (by_alert, no_birthday, placed):
        asked(pupil, acknowledged_at=timezone.now())
    records_hold_place(learner=placed, placed_by=staff)
    admin = make_staff("ada.admin", role=StaffRole.ADMIN)
    base = live_server.url

    page = sign_in(browser, live_server, staff, viewport)
    for pupil, words, state in (
        (by_alert, "because a safeguarding alert was raised about them", "held by an alert"),
        (no_birthday, "their date of birth is not known", "held by an alert, no date of birth"),
        (placed, "Without it, a safeguarding alert would hold them", "held by staff"),
    ):
        page.goto(base + f"/learners/{pupil.pk}/hold/")
        assert words in page.inner_text("main"), state
        assert_accessible(page, f"safeguarding hold, {state}")
    page.close()

    page = sign_in(browser, live_server, admin, viewport)
    page.goto(base + f"/learners/{by_alert.pk}/hold/")
    main = page.inner_text("main")
    assert "because of a safeguarding matter" in main and "alert was raised" not in main
    assert_accessible(page, "safeguarding hold, held by an alert, as an admin")
    page.close()
