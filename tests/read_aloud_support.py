"""What the read-aloud script's tests share: a harness page, a recording speech engine."""

import html
import io
import json
import threading
import wave
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings

from tests.chromium import CHROMIUM, CHROMIUM_LAUNCH_ARGS, require_chromium

STATIC = Path(__file__).resolve().parent.parent / "static"
SCRIPT = "/static/js/read_aloud.js"
QUESTION = "How often do you find it hard to get to sleep?"
SECOND = "Do you feel safe at school?"
ANSWERS = ["Never", "Sometimes", "Often"]
AUDIO = {text: f"/speech/{index:064x}" for index, text in enumerate([QUESTION, *ANSWERS], 1)}
WAIT_MS = 10_000
EN_GB = [
    {"name": "English (Great Britain)", "lang": "en-GB", "default": True, "localService": True}
]
FRENCH = [{"name": "Français", "lang": "fr-FR", "default": True, "localService": True}]
# A voice on its maker's servers (Chrome's): what it reads would leave the portal's origin.
NETWORK_EN_GB = [
    {"name": "Google UK English Female", "lang": "en-GB", "default": True, "localService": False}
]
# The toggle's one label (the page gives it in data-label on the box).
LABEL = "Read questions aloud by themselves"


def speak_button(text: str, with_audio: bool, question: bool = False) -> str:
    audio = f' data-audio="{AUDIO[text]}"' if with_audio and text in AUDIO else ""
    text = html.escape(text)
    name = "Read the question aloud" if question else f"Read aloud: {text}"
    return (
        f'<button type="button" class="speak" data-speak="{text}"{audio} '
        f'aria-label="{name}" hidden>Listen</button>'
    )


def page_html(*, auto: bool, with_audio: bool = True, first: str = QUESTION) -> str:
    """The question page's markup contract: the read-aloud box, buttons and radios."""
    answers = "".join(
        f'<div><label><input type="radio" name="q1" value="{n}" data-speak="{answer}"> '
        f"{answer}</label> {speak_button(answer, with_audio)}</div>"
        for n, answer in enumerate(ANSWERS)
    )
    return f"""<!doctype html>
<html lang="en-gb"><head><meta charset="utf-8"><title>Read aloud harness</title>
<script src="{SCRIPT}" defer></script></head>
<body><main>
<div class="read-aloud" data-auto="{"true" if auto else "false"}" data-lang="en-gb"
  data-label="{LABEL}" data-on-label="Read aloud: on" data-off-label="Read aloud: off">
  <button type="button" class="read-aloud-toggle" aria-pressed="true" hidden>Read aloud</button>
</div>
<form>
<fieldset><legend>{first}</legend> {speak_button(first, with_audio, True)} {answers}</fieldset>
<fieldset><legend>{SECOND}</legend> {speak_button(SECOND, with_audio, True)}
  <label><input type="radio" name="q2" value="0" data-speak="Yes"> Yes</label></fieldset>
</form>
</main></body></html>"""


def silence_wav() -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\0\0" * 800)
    return buffer.getvalue()


# The browser's speech engine, replaced by a recorder: what the page asked it to say is kept
# in window.__spoken. `voices` is what getVoices() answers now; `later`, voices that arrive
# after 300 ms (as Chromium's do); `refuse`, refusing to speak before the pupil's first gesture;
# `fail`, the error every utterance ends with instead of being spoken.
FAKE_SPEECH = """
(({voices, later, refuse, fail}) => {
  window.__spoken = [];
  window.__langs = [];
  window.__played = [];
  let current = voices;
  const listeners = [];
  const fake = {
    speaking: false, pending: false, paused: false,
    getVoices: () => current,
    speak(utterance) {
      if (refuse && !navigator.userActivation.hasBeenActive) {
        utterance.dispatchEvent(new SpeechSynthesisErrorEvent(
          "error", {utterance, error: "not-allowed"}));
        return;
      }
      if (fail) {
        utterance.dispatchEvent(new SpeechSynthesisErrorEvent("error", {utterance, error: fail}));
        return;
      }
      window.__spoken.push(utterance.text);
      window.__langs.push(utterance.lang);
    },
    cancel() {}, pause() {}, resume() {},
    addEventListener(type, listener) { if (type === "voiceschanged") listeners.push(listener); },
    removeEventListener(type, listener) {
      const at = listeners.indexOf(listener);
      if (at >= 0) listeners.splice(at, 1);
    },
  };
  Object.defineProperty(window, "speechSynthesis", {value: fake, configurable: true});
  if (later) {
    setTimeout(() => {
      current = later;
      listeners.slice().forEach((listener) => listener(new Event("voiceschanged")));
    }, 300);
  }
  HTMLMediaElement.prototype.play = function () {
    window.__played.push(new URL(this.src).pathname);
    return Promise.resolve();
  };
})
"""


def csp_header() -> str:
    """The portal's own Content-Security-Policy, so the harness forbids what the site does."""
    directives = settings.CONTENT_SECURITY_POLICY["DIRECTIVES"]
    return "; ".join(f"{name} {' '.join(values)}" for name, values in directives.items())


class Harness(ThreadingHTTPServer):
    """Serves `page` at /question/, the real script, and a recording at each /speech/ address."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), HarnessHandler)
        self.csp = csp_header()
        self.page = ""
        self.wav = silence_wav()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/question/"


class HarnessHandler(BaseHTTPRequestHandler):
    server: Harness

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/question/":
            self.reply(self.server.page.encode(), "text/html; charset=utf-8")
        elif path == SCRIPT:
            self.reply(STATIC.joinpath("js/read_aloud.js").read_bytes(), "text/javascript")
        elif path in AUDIO.values():
            self.reply(self.server.wav, "audio/wav")
        elif path == "/favicon.ico":
            self.send_response(204)  # asked for by every page; a 404 would be logged
            self.end_headers()
        else:
            self.send_error(404)

    def reply(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Security-Policy", self.server.csp)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:
        pass  # the test's output is not the place for an access log


def serving_harness() -> Iterator[Harness]:
    """Serve the harness until the generator is closed (a test's fixture)."""
    server = Harness()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def launched_chromium() -> Iterator:
    """Launch Debian's Chromium through Playwright until the generator is closed."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    # As in conftest's browser fixture: Django would take Playwright's loop for async code.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_playwright() as running:
            launched = running.chromium.launch(
                executable_path=str(CHROMIUM), args=CHROMIUM_LAUNCH_ARGS
            )
            yield launched
            launched.close()


def page_opener(browser, harness: Harness) -> Iterator[Callable]:
    """Open a question page whose browser has these voices (a fresh device each time)."""
    contexts = []
    problems: list[str] = []

    def open_(markup: str, voices=(), later=None, refuse=False, fail=None):
        harness.page = markup
        context = browser.new_context()
        contexts.append(context)
        options = json.dumps(
            {"voices": list(voices), "later": later, "refuse": refuse, "fail": fail}
        )
        context.add_init_script(f"{FAKE_SPEECH}({options});")
        page = context.new_page()
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.on("console", lambda message: problems.append(f"console: {message.text}"))
        page.goto(harness.url)
        return page

    yield open_
    for context in contexts:
        context.close()
    # No script error, no CSP refusal, nothing logged: the page's console stays empty.
    assert problems == []


def speak_selector(text: str) -> str:
    return f'button.speak[data-speak="{text}"]'


def wait_shown(page, selector: str) -> None:
    page.locator(selector).wait_for(state="visible", timeout=WAIT_MS)


def choose(page, answer: str) -> None:
    """Choose an answer as a pupil does: a click on its label, its radio then checked."""
    page.click(f'label:has(input[data-speak="{answer}"])')
    assert page.is_checked(f'input[data-speak="{answer}"]')


def spoken(page) -> list[str]:
    return page.evaluate("window.__spoken")


def wait_spoken(page, texts: list[str]) -> None:
    page.wait_for_function(
        "(texts) => JSON.stringify(window.__spoken) === JSON.stringify(texts)",
        arg=texts,
        timeout=WAIT_MS,
    )


def wait_started(page) -> None:
    """Wait until the script has run and found how it reads aloud (its listeners are set)."""
    page.wait_for_function(
        "() => document.documentElement.hasAttribute('data-read-aloud')", timeout=WAIT_MS
    )


def arrive_by_pointer(page) -> None:
    """Come to the page again as a pupil leaving the page before by a click or tap does."""
    wait_started(page)
    page.mouse.click(2, 2)  # the page's margin: nothing is chosen or pressed
    page.reload()
