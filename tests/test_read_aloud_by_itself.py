"""Reading aloud by itself (static/js/read_aloud.js) in headless Chromium, and its toggle."""

import pytest

from tests.read_aloud_support import (
    ANSWERS,
    AUDIO,
    EN_GB,
    LABEL,
    QUESTION,
    SECOND,
    WAIT_MS,
    arrive_by_pointer,
    choose,
    launched_chromium,
    page_html,
    page_opener,
    serving_harness,
    speak_selector,
    spoken,
    wait_shown,
    wait_spoken,
    wait_started,
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


def test_after_a_tap_reading_by_itself_reads_the_first_question_then_the_answer_tapped(
    open_page,
):
    page = open_page(page_html(auto=True), voices=EN_GB)
    arrive_by_pointer(page)

    wait_spoken(page, [QUESTION])
    toggle = page.locator(".read-aloud-toggle")
    assert toggle.is_visible() and toggle.text_content() == LABEL
    assert toggle.get_attribute("aria-pressed") == "true"
    choose(page, "Sometimes")  # the answer's label: its radio is chosen
    wait_spoken(page, [QUESTION, "Sometimes"])
    page.keyboard.press("ArrowDown")  # the next radio, by the keyboard: not read
    assert page.is_checked('input[data-speak="Often"]')
    choose(page, "Never")
    wait_spoken(page, [QUESTION, "Sometimes", "Never"])
    assert page.evaluate("window.__played") == []


def test_the_keyboard_and_a_screen_readers_clicks_start_no_reading_by_themselves(open_page):
    page = open_page(page_html(auto=True), voices=EN_GB)
    wait_shown(page, ".read-aloud-toggle")

    # An answer chosen by the keyboard: Tab to the radios, Space, an arrow key.
    page.focus('input[data-speak="Never"]')
    page.keyboard.press("Space")
    page.keyboard.press("ArrowDown")
    assert page.is_checked('input[data-speak="Sometimes"]')
    # A screen reader's activation: a click with no pointer before it.
    page.locator('input[data-speak="Often"]').evaluate("(radio) => radio.click()")
    assert page.is_checked('input[data-speak="Often"]')
    page.click(speak_selector(SECOND))  # asked for: read, and nothing before it
    wait_spoken(page, [SECOND])

    # The page left by the keyboard after a click: nothing is read on arrival.
    page.keyboard.press("Tab")
    page.reload()
    wait_shown(page, ".read-aloud-toggle")
    page.focus(speak_selector(QUESTION))
    page.keyboard.press("Space")  # the question's speaker, pressed by the keyboard
    wait_spoken(page, [QUESTION])


def test_a_first_page_reads_nothing_on_arrival_until_the_pupil_taps(open_page):
    page = open_page(page_html(auto=True), voices=EN_GB)
    wait_started(page)
    page.click(speak_selector(SECOND))  # the positive marker: a speaker still speaks
    wait_spoken(page, [SECOND])  # and the first question was not read before it

    for answer in ANSWERS:
        choose(page, answer)  # tapped: each read
    wait_spoken(page, [SECOND, *ANSWERS])


def test_without_a_voice_reading_by_itself_plays_the_portals_audio(open_page):
    page = open_page(page_html(auto=True), voices=[])
    arrive_by_pointer(page)

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
    arrive_by_pointer(page)
    wait_shown(page, ".read-aloud-toggle")  # shown: the answers have audio

    choose(page, "Often")

    page.wait_for_function("() => window.__played.length === 1", timeout=WAIT_MS)
    assert page.evaluate("window.__played") == [AUDIO["Often"]]
    assert page.is_hidden(speak_selector(SECOND)) and page.is_visible(speak_selector("Never"))


def test_a_browser_refusing_speech_at_first_reads_nothing_until_the_pupil_asks(open_page):
    page = open_page(page_html(auto=True), voices=EN_GB, refuse=True)
    arrive_by_pointer(page)  # its first question would be read, but the browser refuses
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
    arrive_by_pointer(page)
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
