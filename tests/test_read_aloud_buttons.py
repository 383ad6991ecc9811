"""The read-aloud buttons (static/js/read_aloud.js) in headless Chromium: which voice, or audio."""

import pytest

from tests.read_aloud_support import (
    ANSWERS,
    AUDIO,
    EN_GB,
    FRENCH,
    NETWORK_EN_GB,
    QUESTION,
    SECOND,
    WAIT_MS,
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


def test_with_a_voice_every_button_speaks_its_own_text_in_the_pages_language(open_page):
    page = open_page(page_html(auto=False, with_audio=False), voices=EN_GB)
    wait_shown(page, speak_selector(QUESTION))

    for text in [QUESTION, *ANSWERS, SECOND]:
        page.click(speak_selector(text))

    assert spoken(page) == [QUESTION, *ANSWERS, SECOND]
    assert set(page.evaluate("window.__langs")) == {"en-GB"}
    assert page.evaluate("window.__played") == []  # the browser's voice, not the audio
    assert page.get_attribute("html", "data-read-aloud") == "voice"
    # Not reading by itself: nothing said before a button was pressed, no toggle.
    assert page.is_hidden(".read-aloud-toggle")


def test_a_speak_button_works_from_the_keyboard(open_page):
    page = open_page(page_html(auto=False), voices=EN_GB)
    wait_shown(page, speak_selector(QUESTION))

    page.focus(speak_selector("Sometimes"))
    page.keyboard.press("Enter")
    page.focus(speak_selector(QUESTION))
    page.keyboard.press("Space")

    wait_spoken(page, ["Sometimes", QUESTION])
    label = page.get_attribute(speak_selector("Sometimes"), "aria-label")
    assert label == "Read aloud: Sometimes"


def test_voices_that_load_late_are_waited_for(open_page):
    page = open_page(page_html(auto=False, with_audio=False), voices=[], later=EN_GB)
    wait_shown(page, speak_selector(SECOND))  # it has no audio: shown for the voice alone

    page.click(speak_selector(SECOND))

    assert spoken(page) == [SECOND]


def test_without_a_voice_the_portals_audio_plays_and_a_text_without_it_has_no_button(
    open_page,
):
    # A French voice only: no voice for the page's English.
    page = open_page(page_html(auto=False), voices=FRENCH)
    wait_shown(page, speak_selector(QUESTION))

    page.click(speak_selector(QUESTION))
    page.click(speak_selector("Often"))

    assert page.evaluate("window.__played") == [AUDIO[QUESTION], AUDIO["Often"]]
    assert spoken(page) == []
    assert page.is_hidden(speak_selector(SECOND))  # no recording of it, no voice
    assert page.is_visible(speak_selector("Never"))


def test_with_neither_a_voice_nor_audio_no_button_and_no_toggle_shows(open_page):
    page = open_page(page_html(auto=True, with_audio=False), voices=[])
    # Decided after the wait for voices: then a page that can say nothing shows nothing.
    page.wait_for_selector("html[data-read-aloud=none]", state="attached", timeout=WAIT_MS)

    assert page.locator("button.speak").count() == 5
    assert page.locator("button.speak:visible").count() == 0
    assert page.is_hidden(".read-aloud-toggle")
    assert spoken(page) == [] and page.evaluate("window.__played") == []


def test_a_voice_on_its_makers_servers_is_never_used(open_page):
    page = open_page(page_html(auto=False), voices=NETWORK_EN_GB)
    wait_shown(page, speak_selector(QUESTION))

    page.click(speak_selector(QUESTION))

    page.wait_for_function("() => window.__played.length === 1", timeout=WAIT_MS)
    assert page.evaluate("window.__played") == [AUDIO[QUESTION]]
    assert spoken(page) == []
    assert page.get_attribute("html", "data-read-aloud") == "audio"
    assert page.is_hidden(speak_selector(SECOND))  # no audio of it, and no voice to use


def test_a_voice_that_fails_gives_way_to_the_portals_audio(open_page):
    page = open_page(page_html(auto=False), voices=EN_GB, fail="synthesis-failed")
    wait_shown(page, speak_selector(QUESTION))

    page.click(speak_selector(QUESTION))

    page.wait_for_function("() => window.__played.length === 1", timeout=WAIT_MS)
    assert page.evaluate("window.__played") == [AUDIO[QUESTION]]
    assert spoken(page) == []
