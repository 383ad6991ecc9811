"""Layout a person notices at 360 px (a phone) and 1280 px (a laptop) that the tour's general
rules (tests/test_phones.py: no sideways scrolling of the page) do not catch: a row's action
hidden in a table's own scrolling box, a menu too narrow for its options."""

import re

import pytest

from assessments.content import questions_to_json
from assessments.taking import PRIMARY_LEVEL
from partner_api import Answer, Question
from tests.browsing import browser_sign_in
from tests.factories import (
    MOON,
    SLEEP,
    SUN,
    completed,
    flagged,
    make_attempt,
    make_sign_in_lock,
    ready_picture,
)
from tests.journeys import page_url

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE, LAPTOP = 360, 1280


@pytest.fixture
def staff_page(browser, live_server, staff):
    """Open a page as the member of staff, in a window `width` px wide."""
    contexts = []

    def at(width: int, path: str):
        context = browser.new_context(viewport={"width": width, "height": 800})
        contexts.append(context)
        page = context.new_page()
        browser_sign_in(page, live_server.url, staff.username)
        page.goto(live_server.url + path)
        return page

    yield at
    for context in contexts:
        context.close()


def in_view_without_scrolling(page, target) -> None:
    """Check the target is visible within the window's width, and nothing scrolls sideways."""
    assert target.is_visible()
    box = target.bounding_box()
    width = page.viewport_size["width"]
    assert box["x"] >= 0 and box["x"] + box["width"] <= width, box
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    assert page.evaluate(
        "[...document.querySelectorAll('.table-scroll')]"
        ".every((box) => box.scrollWidth <= box.clientWidth)"
    )


@pytest.fixture
def needing_action(other_learner):
    """A follow-up to open, and answers waiting to be sent that staff may retry."""
    flagged(other_learner, SLEEP)
    make_attempt(other_learner, assessment_id=43, state="submit_pending")


def test_open_and_retry_now_are_in_view_on_a_phone(staff_page, needing_action):
    page = staff_page(PHONE, "/follow-ups/")
    first_row = page.locator("main table tbody tr").first
    in_view_without_scrolling(page, first_row.get_by_role("link", name=re.compile("^Open")))
    # Each value keeps its column's name on the card.
    shown_before = first_row.locator("td").evaluate_all(
        "(cells) => cells.map((cell) => getComputedStyle(cell, '::before').content)"
    )
    assert '"Risk level"' in shown_before and '"Due"' in shown_before

    page = staff_page(PHONE, "/operations/")
    in_view_without_scrolling(page, page.get_by_role("button", name=re.compile("^Retry now")))


def test_lifting_a_lock_and_a_learners_whole_history_are_in_view_on_a_phone(
    staff_page, other_learner
):
    make_sign_in_lock(kind="account_address", user=other_learner.user, address="203.0.113.9")
    completed(other_learner, "2026-10-10", risk="HIGH")

    page = staff_page(PHONE, "/sign-in-locks/")
    in_view_without_scrolling(page, page.get_by_role("button", name=re.compile("^Lift the lock")))

    page = staff_page(PHONE, f"/learners/{other_learner.pk}/")
    history = page.locator("main table", has=page.locator("#attempts-caption"))
    in_view_without_scrolling(page, history.locator("tbody tr").first.locator("td").last)


def test_on_a_laptop_the_rows_stay_a_table_with_its_headers(staff_page, needing_action):
    for path in ["/follow-ups/", "/operations/"]:
        page = staff_page(LAPTOP, path)
        table = page.locator("main table").first
        assert table.evaluate("(table) => getComputedStyle(table).display") == "table"
        assert table.locator("thead th").first.is_visible()
        in_view_without_scrolling(page, table.locator("tbody tr").first.locator("td").last)


NEEDED_WIDTH_JS = """(select) => {
  // The same menu left to size itself: as wide as its longest option needs.
  const probe = select.cloneNode(true);
  probe.removeAttribute("id");
  probe.removeAttribute("name");
  Object.assign(probe.style, {width: "auto", minWidth: "0", maxWidth: "none",
                              position: "absolute", visibility: "hidden"});
  select.parentElement.append(probe);
  const needed = probe.getBoundingClientRect().width;
  probe.remove();
  return needed;
}"""


@pytest.mark.parametrize("width", [PHONE, LAPTOP])
def test_the_sort_menu_is_wide_enough_for_its_longest_option(staff_page, needing_action, width):
    page = staff_page(width, "/follow-ups/")
    sort = page.locator("#id_sort")

    needed = sort.evaluate(NEEDED_WIDTH_JS)

    assert sort.bounding_box()["width"] >= needed - 0.5, (sort.bounding_box(), needed)
    assert sort.bounding_box()["x"] + sort.bounding_box()["width"] <= width


# A browser voice on the device, so the page shows its speaker buttons.
ONE_VOICE = """
Object.defineProperty(window, "speechSynthesis", {configurable: true, value: {
  speaking: false, pending: false, paused: false,
  getVoices: () => [{name: "Test", lang: "en-GB", default: true, localService: true}],
  speak() {}, cancel() {}, pause() {}, resume() {},
  addEventListener() {}, removeEventListener() {},
}});
"""
# How many lines the label's words take (a long word broken mid-word takes two).
WORD_LINES_JS = """(label) => {
  const words = [...label.childNodes].filter((node) => node.nodeType === 3 && node.data.trim());
  const range = document.createRange();
  range.selectNodeContents(words[words.length - 1]);
  return new Set([...range.getClientRects()].map((box) => Math.round(box.top))).size;
}"""
LONG_WORDS = [("Uncomfortable", SUN), ("Occasionally", MOON), ("Embarrassed", "smile")]


def test_a_primary_pupils_answer_tiles_and_speakers_fit_a_phone(browser, live_server, learner):
    learner.level = PRIMARY_LEVEL
    learner.save(update_fields=["level"])
    ready_picture(SUN)
    ready_picture(MOON)
    question = Question(
        id="q-feel", text="How do you feel when you answer questions in class?",
        group="Feelings", display_order=1, created=None, updated=None,
        answers=[
            Answer(id=f"q-feel-{n}", question_id="q-feel", display_order=n, copy=copy, icon=icon)
            for n, (copy, icon) in enumerate(LONG_WORDS, start=1)
        ],
    )  # fmt: skip
    attempt = make_attempt(learner, content=questions_to_json([question]))
    context = browser.new_context(viewport={"width": PHONE, "height": 800})
    context.add_init_script(ONE_VOICE)
    page = context.new_page()
    browser_sign_in(page, live_server.url, learner.username)
    page.goto(live_server.url + page_url(attempt))

    speakers = page.locator("main button.speak")
    speakers.first.wait_for(state="visible")
    assert speakers.count() == 1 + len(LONG_WORDS)
    for copy, _ in LONG_WORDS:
        label = page.locator("main label", has_text=copy)
        in_view_without_scrolling(page, label)
        assert label.evaluate(WORD_LINES_JS) == 1, f"{copy} is broken across lines"
        in_view_without_scrolling(page, page.locator(f'button.speak[data-speak="{copy}"]'))
    context.close()
