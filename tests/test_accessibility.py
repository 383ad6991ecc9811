"""Every page and state axe can reach has no WCAG 2.x A or AA violation."""

import pytest
from axe_playwright_python.sync_playwright import Axe

from assessments.models import AttemptAnswer
from tests.conftest import browser_sign_in
from tests.test_bulk_registration import HEADER, good_rows
from tests.test_dashboard import cohort_learner, completed
from tests.test_followups import flagged
from tests.test_page_rendering import make_attempt, make_result, page_url
from tests.test_registration import VALID

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WCAG_AA = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]}
}


def violations(page) -> list[str]:
    """Run axe on the page as it stands; return one readable line per failing element."""
    found = Axe().run(page, options={**WCAG_AA, "resultTypes": ["violations"]})
    return [
        f"{rule['id']} ({rule['impact']}): {rule['help']} at {node['target']}: "
        f"{node.get('failureSummary', '')}".replace("\n", " ")
        for rule in found.response["violations"]
        for node in rule["nodes"]
    ]


def assert_accessible(page, state: str) -> None:
    problems = violations(page)
    assert not problems, f"{state} ({page.url}):\n  " + "\n  ".join(problems)


@pytest.fixture(params=[(1280, 800), (360, 640)], ids=["laptop", "phone"])
def viewport(request) -> dict:
    """Each page is checked at a laptop's size and a phone's, where the layout differs."""
    width, height = request.param
    return {"width": width, "height": height}


def sign_in(browser, live_server, user, viewport):
    page = browser.new_page(viewport=viewport)
    browser_sign_in(page, live_server.url, user.username)
    return page


def test_the_sign_in_page_passes_axe_blank_and_with_an_error(browser, live_server, db, viewport):
    page = browser.new_page(viewport=viewport)
    page.goto(live_server.url + "/accounts/login/")
    assert_accessible(page, "sign-in page")
    page.fill("#id_username", "nobody")
    page.fill("#id_password", "wrong-password")
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    assert_accessible(page, "sign-in page with an error")
    page.close()


def test_staff_pages_pass_axe_in_each_state(browser, live_server, staff, settings, viewport):
    settings.DASHBOARD_MIN_GROUP_SIZE = 1
    page = sign_in(browser, live_server, staff, viewport)

    page.goto(live_server.url + "/learners/")
    assert_accessible(page, "learner list, empty")
    page.goto(live_server.url + "/follow-ups/")
    assert_accessible(page, "follow-up queue, empty")

    grower = cohort_learner(name="grower")
    completed(grower, "2026-09-10", score="40.25", risk="HIGH")
    completed(grower, "2026-10-10", score="55", risk="MODERATE")
    item = flagged(grower, "SLEEP")

    for path, state in [
        ("/dashboard/", "dashboard"),
        ("/dashboard/?from=2026-09-30&to=2026-09-01&level=LEVEL9", "dashboard, filter errors"),
        ("/learners/", "learner list with rows"),
        (f"/learners/{grower.pk}/", "learner detail with a trend"),
        ("/follow-ups/", "follow-up queue with an item"),
        (f"/follow-ups/{item.pk}/", "follow-up item"),
        ("/learners/import/", "import upload page"),
        ("/operations/", "operations page"),
    ]:
        page.goto(live_server.url + path)
        assert_accessible(page, state)

    page.goto(live_server.url + "/learners/new/")
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    assert_accessible(page, "register form with errors")

    page.goto(live_server.url + "/learners/import/")
    bad_rows = HEADER + "\nbad name!,,2010-01-01,,,,\nok.name,short,1800-01-01,x,,,LEVEL9\n"
    page.set_input_files(
        "input[type=file]",
        files=[{"name": "learners.csv", "mimeType": "text/csv", "buffer": bad_rows.encode()}],
    )
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    assert "/learners/import/" in page.url
    assert_accessible(page, "import preview with bad rows")
    page.close()


def test_learner_pages_pass_axe_in_each_state(browser, live_server, learner, settings, viewport):
    attempt = make_attempt(learner)
    make_result(make_attempt(learner, assessment_id=42, state="submitted"))
    page = sign_in(browser, live_server, learner.user, viewport)

    page.goto(live_server.url + "/me/")
    assert_accessible(page, "my assessments")
    page.goto(live_server.url + page_url(attempt))
    assert_accessible(page, "question page")
    page.click("main button[name=continue]")
    page.wait_for_load_state()
    assert page.is_visible(".error-summary")
    assert_accessible(page, "question page with an error summary")

    for question_id, answer_id in [
        ("q-sleep", "q-sleep-a1"),
        ("q-wake", "q-wake-a2"),
        ("q-notes", "q-notes-a1"),
    ]:
        AttemptAnswer.objects.create(attempt=attempt, question_id=question_id, answer_id=answer_id)
    page.goto(live_server.url + f"/me/assessments/{attempt.assessment_id}/check/")
    assert "/check/" in page.url
    assert_accessible(page, "check answers")
    page.goto(live_server.url + "/me/assessments/42/results/")
    assert_accessible(page, "results")

    settings.LEARNER_IDLE_TIMEOUT = 121  # the warning comes 2 minutes before: after 1 s
    page.goto(live_server.url + "/me/")
    page.get_by_role("alertdialog").wait_for(timeout=10000)
    assert_accessible(page, "session-timeout dialog open")
    page.close()


def test_further_pages_and_states_pass_axe(browser, live_server, staff, learner, viewport):
    """Pages beyond the named list: a banner, a learner with no results, staff's own forms."""
    from datetime import timedelta

    from django.utils import timezone

    from portal.models import UpstreamHealth
    from portal.partner_api import get_client

    make_result(make_attempt(learner, assessment_id=42, state="submitted"))
    make_attempt(learner, assessment_id=43, state="submitted")
    make_attempt(learner, assessment_id=44)
    staff_page = sign_in(browser, live_server, staff, viewport)
    for path, state in [
        (f"/learners/{learner.pk}/", "learner detail with one result"),
        (f"/learners/{learner.pk}/attempts/42/", "staff view of a learner's results"),
        (f"/learners/{learner.pk}/password/", "password reset form"),
        (f"/learners/{learner.pk}/erase/", "erase confirmation"),
        ("/learners/?q=nobody-matches", "learner list, no matches"),
        ("/learners/999999/", "not found page"),
    ]:
        staff_page.goto(live_server.url + path)
        assert_accessible(staff_page, state)

    UpstreamHealth.objects.update_or_create(
        base_url=get_client().base_url,
        defaults={"unavailable_until": timezone.now() + timedelta(minutes=5)},
    )
    item = flagged(learner, "SLEEP")
    staff_page.goto(live_server.url + f"/follow-ups/{item.pk}/")
    staff_page.fill("#id_due_date", "31/02/2026")
    staff_page.click("main form button[type=submit]")
    staff_page.wait_for_load_state()
    assert staff_page.is_visible(".error-summary")
    assert_accessible(staff_page, "follow-up item with an error")
    staff_page.fill("#id_due_date", str(item.due_date))
    staff_page.fill("#id_note", "Spoke to the family.")
    staff_page.click("main form button[type=submit]")
    staff_page.wait_for_load_state()
    assert staff_page.locator(".messages").count()
    assert_accessible(staff_page, "follow-up item with a message")

    for number in range(30):
        cohort_learner(name=f"many{number}")
    staff_page.goto(live_server.url + "/learners/?page=2")
    assert staff_page.locator("nav.pagination, .pagination").count()
    assert_accessible(staff_page, "learner list, second page")

    staff_page.goto(live_server.url + "/accounts/logout/")
    assert_accessible(staff_page, "sign-out confirmation")

    staff_page.goto(live_server.url + "/dashboard/")
    assert staff_page.is_visible(".banner-warning")
    assert_accessible(staff_page, "dashboard with the service-down banner")
    staff_page.close()

    page = sign_in(browser, live_server, learner.user, viewport)
    page.goto(live_server.url + "/me/assessments/44/page/2/")
    assert_accessible(page, "the last question page, service down")
    page.goto(live_server.url + "/me/assessments/43/")
    assert_accessible(page, "a sent assessment waiting for results, service down")
    page.close()


def test_the_check_would_catch_a_violation_on_a_portal_page(
    browser, live_server, learner, viewport
):
    """Axe runs under the portal's Content-Security-Policy and its findings reach the message."""
    page = sign_in(browser, live_server, learner.user, viewport)
    page.goto(live_server.url + "/me/")
    page.evaluate("document.documentElement.removeAttribute('lang')")

    with pytest.raises(AssertionError, match="html-has-lang"):
        assert_accessible(page, "my assessments without lang")
    page.close()


def test_pages_after_registering_through_the_sandbox_pass_axe(
    browser, live_server, staff, upstream, viewport
):
    page = sign_in(browser, live_server, staff, viewport)
    page.goto(live_server.url + "/learners/new/")
    for name, value in VALID.items():
        if name == "level":
            page.select_option(f"#id_{name}", value)
        else:
            page.fill(f"#id_{name}", value)
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    assert "/learners/new/" not in page.url
    assert_accessible(page, "after registering a learner")

    page.goto(live_server.url + "/learners/import/")
    rows = HEADER + "\n" + good_rows(2) + "bad name!,,2010-01-01,,,,\n"
    page.set_input_files(
        "input[type=file]",
        files=[{"name": "learners.csv", "mimeType": "text/csv", "buffer": rows.encode()}],
    )
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    page.click("main form[action$='/confirm/'] button[type=submit]")
    page.wait_for_load_state()
    page.get_by_text("Import finished").first.wait_for(timeout=10000)
    assert_accessible(page, "a finished import with a skipped row")
    page.close()
