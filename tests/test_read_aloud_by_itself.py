"""Reading aloud by itself (static/js/read_aloud.js) in headless Chromium, and its toggle."""

import pytest

from tests.read_aloud_support import (
    AUDIO,
    EN_GB,
    LABEL,
    QUESTION,
    SECOND,
    WAIT_MS,
    choose,
    launched_chromium,
    page_html,
    page_opener,
    serving_harness,
    speak_selector,
    spoken,
    wait_shown,
    wait_spoken,
)

pytestmark = pytest.mark.browser


@pytest.fixture
def harness():
    yield from serving_harness()


@pytest.fixture(scope="module")
def browser():
    yield from launched_chromium()


@pytest.fixture
def open_page(browser, harness):
    yield from page_opener(browser, harness)


def test_reading_by_itself_reads_the_first_question_then_the_answer_chosen(open_page):
    page = open_page(page_html(auto=True), voices=EN_GB)

    wait_spoken(page, [QUESTION])
    toggle = page.locator(".read-aloud-toggle")
    assert toggle.is_visible() and toggle.text_content() == LABEL
    assert toggle.get_attribute("aria-pressed") == "true"
    choose(page, "Sometimes")  # the answer's label: its radio is chosen
    wait_spoken(page, [QUESTION, "Sometimes"])
    page.keyboard.press("ArrowDown")  # the next radio, by the keyboard
    wait_spoken(page, [QUESTION, "Sometimes", "Often"])
    assert page.evaluate("window.__played") == []


def test_without_a_voice_reading_by_itself_plays_the_portals_audio(open_page):
    page = open_page(page_html(auto=True), voices=[])

    page.wait_for_function(
        "(url) => window.__played.length === 1 && window.__played[0] === url",
        arg=AUDIO[QUESTION],
        timeout=WAIT_MS,
    )
    choose(page, "Never")
    page.wait_for_function("() => window.__played.length === 2", timeout=WAIT_MS)
    assert page.evaluate("window.__played") == [AUDIO[QUESTION], AUDIO["Never"]]


def test_without_a_voice_a_first_question_with_no_audio_is_not_replaced_by_an_answer(open_page):
    page = open_page(page_html(auto=True, first=SECOND), voices=[])
    wait_shown(page, ".read-aloud-toggle")  # shown: the answers have audio

    choose(page, "Often")

    page.wait_for_function("() => window.__played.length === 1", timeout=WAIT_MS)
    assert page.evaluate("window.__played") == [AUDIO["Often"]]
    assert page.is_hidden(speak_selector(SECOND)) and page.is_visible(speak_selector("Never"))


def test_a_browser_refusing_speech_at_first_reads_nothing_until_the_pupil_asks(open_page):
    page = open_page(page_html(auto=True), voices=EN_GB, refuse=True)
    wait_shown(page, ".read-aloud-toggle")
    assert spoken(page) == []  # refused: nothing said yet

    # Moving about by the keyboard (a screen reader's user does) starts nothing.
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.click(speak_selector(SECOND))  # asked for: read, and nothing before it
    wait_spoken(page, [SECOND])
    choose(page, "Often")  # reading by itself goes on from the pupil's own action
    wait_spoken(page, [SECOND, "Often"])


def test_the_toggle_turned_off_stops_reading_by_itself_and_is_remembered(open_page):
    page = open_page(page_html(auto=True), voices=EN_GB)
    wait_spoken(page, [QUESTION])

    page.click(".read-aloud-toggle")

    toggle = page.locator(".read-aloud-toggle")
    assert toggle.get_attribute("aria-pressed") == "false"
    assert toggle.text_content() == LABEL  # only its state changed: heard as "not pressed"
    choose(page, "Often")
    # The buttons still speak when pressed.
    page.click(speak_selector("Never"))
    assert spoken(page) == [QUESTION, "Never"]

    page.reload()
    wait_shown(page, ".read-aloud-toggle")
    assert toggle.get_attribute("aria-pressed") == "false"
    assert toggle.text_content() == LABEL
    choose(page, "Sometimes")
    page.click(speak_selector(SECOND))
    assert spoken(page) == [SECOND]  # not the first question on arrival, nor the answer

    page.click(".read-aloud-toggle")  # on again
    assert toggle.get_attribute("aria-pressed") == "true"
    choose(page, "Never")
    wait_spoken(page, [SECOND, "Never"])


def test_a_school_that_does_not_read_by_itself_shows_no_toggle_and_reads_nothing_unasked(
    open_page,
):
    page = open_page(page_html(auto=False), voices=EN_GB)
    wait_shown(page, speak_selector(QUESTION))

    choose(page, "Often")
    page.click(speak_selector(SECOND))

    assert spoken(page) == [SECOND]
    assert page.is_hidden(".read-aloud-toggle")
