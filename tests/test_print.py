"""The results page printed for a parent or tutor meeting: content only, nothing cut off."""

from pathlib import Path

import pytest

from schools.models import PartnerSettings, School
from tests.browsing import browser_sign_in
from tests.factories import make_attempt, make_result

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(__file__).parent / "artifacts"


def signed_in_page(browser, live_server, learner):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    browser_sign_in(page, live_server.url, learner.username)
    return page


def test_a_printed_results_page_shows_the_results_and_none_of_the_site_around_them(
    browser, live_server, learner
):
    make_result(make_attempt(learner, assessment_id=42, state="submitted"))
    page = signed_in_page(browser, live_server, learner)
    page.goto(live_server.url + "/me/assessments/42/results/")
    assert not page.is_visible(".print-only")  # on screen, the page is as usual

    page.emulate_media(media="print")

    assert page.is_visible("section.results") and page.is_visible("ul.help-areas")
    assert page.is_visible("section.support")  # who to talk to, and the helplines
    assert f"Results of {learner.display_name}, printed on" in page.inner_text(".print-only")
    for screen_only in (".site-header", ".skip-link", "text=Back to my assessments"):
        assert not page.is_visible(screen_only), screen_only
    # Nothing is wider than the paper.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    ARTIFACTS.mkdir(exist_ok=True)
    page.pdf(path=str(ARTIFACTS / "results-print.pdf"), format="A4")
    assert (ARTIFACTS / "results-print.pdf").stat().st_size > 1000
    page.close()


def test_a_printed_safeguarding_record_starts_with_its_marking_not_the_school_bar(
    browser, live_server, learner, staff
):
    # A second school: staff pages show "Working in: ..." above the content.
    oak = School.objects.create(code="100002", name="Oak Primary")
    PartnerSettings.objects.create(school=oak)
    page = signed_in_page(browser, live_server, staff)
    page.goto(live_server.url + f"/safeguarding/learners/{learner.pk}/print/")
    assert page.is_visible(".school-bar")  # on screen, staff see where they work

    page.emulate_media(media="print")

    assert page.is_visible("text=Confidential: child protection record")
    printed = page.evaluate("document.body.innerText").strip()
    # The marking prints in capitals (text-transform), so compare without case.
    assert printed.lower().startswith("confidential: child protection record"), printed[:200]
    for not_the_record in (".school-bar", ".site-header", ".skip-link", "text=Back to the"):
        assert not page.is_visible(not_the_record), not_the_record
    page.close()
