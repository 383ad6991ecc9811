"""The sign-in card scanner (static/js/card_scan.js) in headless Chromium with a fake camera."""

import html
import io
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import segno
from django.conf import settings

from tests.chromium import CHROMIUM, CHROMIUM_LAUNCH_ARGS, require_chromium
from tests.fake_camera import chromium_with_camera, write_y4m

pytestmark = pytest.mark.browser

STATIC = Path(__file__).resolve().parent.parent / "static"
CSS = "/static/css/portal.css"
SCRIPT = "/static/js/card_scan.js"
JSQR = "/static/vendor/jsqr/jsQR.js"
SECRET = "Zq3-x_9LmN0pQrStUvWxYz12"  # as secrets.token_urlsafe(18) makes them: 24 characters
CARD_URL = f"https://portal.example/card/#{SECRET}"
FOUND = "Card found. Just a moment\N{HORIZONTAL ELLIPSIS}"  # what the page says as it sends
WAIT_MS = 20_000  # a slow machine may take seconds to start Chromium's camera and decode

# The markup contract of /card/ (the section, the secret's form), and a typed-code field, with
# the portal's style sheet: what shows and what is hidden is what the learner would see.
PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Card scan harness</title>
<link rel="stylesheet" href="{CSS}"><script src="{SCRIPT}" defer></script></head>
<body><main>
<section id="card-scan" class="card-scan" hidden data-jsqr-src="{JSQR}">
  <h2>Scan your card</h2>
  <button type="button" id="scan-start" class="button">Scan your card</button>
  <button type="button" id="scan-stop" class="button secondary" hidden>Stop the camera</button>
  <video id="scan-video" playsinline muted hidden></video>
  <p id="scan-status" role="status" aria-live="polite"></p>
</section>
<form method="post" action="/card/" id="card-secret-form">
  <input type="hidden" name="csrfmiddlewaretoken" value="harness-token">
  <input type="hidden" name="secret" id="card-secret" value="">
</form>
<form method="post" action="/card/">
  <label for="id_code">The code on your card</label> <input id="id_code" name="code">
</form>
</main></body></html>"""

# getUserMedia wrapped to keep the streams it hands out, so that a test can see them stopped
# (about:blank, where every page starts, is no secure context: it has no mediaDevices).
KEEP_STREAMS = """
window.cameraStreams = [];
if (window.isSecureContext) {
  const getUserMedia = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
  navigator.mediaDevices.getUserMedia = async (constraints) => {
    const stream = await getUserMedia(constraints);
    window.cameraStreams.push(stream);
    return stream;
  };
}
"""
ALL_TRACKS_ENDED = """() => window.cameraStreams.length > 0 && window.cameraStreams.every(
  (stream) => stream.getTracks().every((track) => track.readyState === "ended"))"""
# What the page was like when it sent the secret, kept where the next page can read it.
NOTE_WHEN_SENT = f"""
const submit = HTMLFormElement.prototype.submit;
HTMLFormElement.prototype.submit = function () {{
  sessionStorage.setItem("addressWhenSent", location.href);
  sessionStorage.setItem("cameraOffWhenSent", ({ALL_TRACKS_ENDED})());
  sessionStorage.setItem("statusWhenSent", document.getElementById("scan-status").textContent);
  submit.call(this);
}};
"""
NATIVE_QR_DETECTOR = """async () => Boolean(window.BarcodeDetector)
  && (await BarcodeDetector.getSupportedFormats()).includes("qr_code")"""


def csp_header() -> str:
    """The portal's own Content-Security-Policy, so the harness forbids what the site does."""
    directives = settings.CONTENT_SECURITY_POLICY["DIRECTIVES"]
    return "; ".join(f"{name} {' '.join(values)}" for name, values in directives.items())


class Harness(ThreadingHTTPServer):
    """Serves PAGE at /card/, the real static files, and records what is posted to /card/."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), HarnessHandler)
        self.csp = csp_header()
        self.requested: list[str] = []
        self.posted: list[dict[str, list[str]]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/card/"


class HarnessHandler(BaseHTTPRequestHandler):
    server: Harness

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        self.server.requested.append(path)
        if path == "/card/":
            self.reply(PAGE.encode(), "text/html; charset=utf-8")
        elif path in (CSS, SCRIPT, JSQR):
            kind = "text/css" if path == CSS else "text/javascript"
            self.reply(STATIC.joinpath(path.removeprefix("/static/")).read_bytes(), kind)
        elif path == "/favicon.ico":
            self.send_response(204)  # asked for by every page; a 404 would be logged
            self.end_headers()
        else:
            self.send_error(404)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        fields = parse_qs(self.rfile.read(length).decode())
        self.server.posted.append(fields)
        received = html.escape(fields.get("secret", [""])[0])
        body = f'<!doctype html><title>Received</title><p id="received">{received}</p>'
        self.reply(body.encode(), "text/html; charset=utf-8")

    def reply(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Security-Policy", self.server.csp)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:
        pass  # the test's output is not the place for an access log


@pytest.fixture
def harness() -> Iterator[Harness]:
    server = Harness()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def playwright():
    """Playwright's own: each test launches Chromium with the camera it needs."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    # As in conftest's browser fixture: Django would take Playwright's loop for async code.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_playwright() as running:
            yield running


def qr_png(text: str) -> bytes:
    """A QR code of text, drawn as the portal draws a card's (a full QR code, not a micro one)."""
    buffer = io.BytesIO()
    segno.make_qr(text).save(buffer, kind="png", scale=8, border=4)
    return buffer.getvalue()


@pytest.fixture
def open_page(playwright, harness, tmp_path) -> Iterator[Callable]:
    """Open the harness in a Chromium whose camera shows a QR code of `showing` (if given)."""
    # Every page keeps its camera streams and notes how it was when it sent the form.
    browsers = []
    problems: list[str] = []

    def open_(showing: str | None = None, fragment: str = "", init_script: str = ""):
        if showing is None:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=CHROMIUM_LAUNCH_ARGS
            )
        else:
            y4m = write_y4m(qr_png(showing), tmp_path / f"camera-{len(browsers)}.y4m")
            browser = chromium_with_camera(playwright.chromium, y4m)
        browsers.append(browser)
        page = browser.new_page()
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.on("console", lambda message: problems.append(f"console: {message.text}"))
        page.add_init_script(KEEP_STREAMS + NOTE_WHEN_SENT + init_script)
        page.goto(harness.url + fragment)
        return page

    yield open_
    for browser in browsers:
        browser.close()
    # No script error, no CSP refusal, nothing logged: the page's console stays empty.
    assert problems == []


def wait_for_status(page, text: str) -> None:
    """Wait until the scanner's status says exactly text."""
    page.wait_for_function(
        "(text) => document.getElementById('scan-status').textContent === text",
        arg=text,
        timeout=WAIT_MS,
    )


def test_scanning_a_card_posts_its_secret(open_page, harness):
    page = open_page(showing=CARD_URL)
    assert page.is_visible("#card-scan")
    assert JSQR not in harness.requested  # fetched only when someone scans
    native = page.evaluate(NATIVE_QR_DETECTOR)
    page.click("#scan-start")
    page.locator("#received").wait_for(timeout=WAIT_MS)
    assert page.text_content("#received") == SECRET
    assert harness.posted == [{"csrfmiddlewaretoken": ["harness-token"], "secret": [SECRET]}]
    assert page.evaluate("sessionStorage.getItem('cameraOffWhenSent')") == "true"
    assert page.evaluate("sessionStorage.getItem('statusWhenSent')") == FOUND
    # Headless Chromium on Linux reads no QR codes natively, so this is jsQR's test there.
    assert (JSQR in harness.requested) is not native


def test_opening_a_cards_link_posts_its_secret_and_forgets_the_address(open_page, harness):
    page = open_page(fragment=f"#{SECRET}")
    page.locator("#received").wait_for(timeout=WAIT_MS)
    assert page.url == harness.url  # the answer to the post, at /card/ with no fragment
    assert harness.posted == [{"csrfmiddlewaretoken": ["harness-token"], "secret": [SECRET]}]
    assert page.evaluate("sessionStorage.getItem('addressWhenSent')") == harness.url
    assert page.evaluate("sessionStorage.getItem('statusWhenSent')") == FOUND
    # Sent while the page was still loading, the form's answer took the page's place in the
    # history: no entry holds the secret, and going back leaves /card/.
    page.go_back()
    assert SECRET not in page.url
    assert len(harness.posted) == 1
    assert JSQR not in harness.requested


def test_a_cards_link_opened_on_the_page_itself_is_sent_too(open_page, harness):
    # The camera running, the address changes only in its fragment: no new page loads.
    page = open_page(showing="not a card")
    page.click("#scan-start")
    page.wait_for_selector("#scan-video:not([hidden])")
    page.goto(f"{harness.url}#{SECRET}")
    page.locator("#received").wait_for(timeout=WAIT_MS)
    assert harness.posted == [{"csrfmiddlewaretoken": ["harness-token"], "secret": [SECRET]}]
    assert page.evaluate("sessionStorage.getItem('addressWhenSent')") == harness.url
    assert page.evaluate("sessionStorage.getItem('cameraOffWhenSent')") == "true"


def test_a_broken_link_is_dropped_and_said_so(open_page, harness):
    page = open_page(fragment="#too-short")
    wait_for_status(page, "That card link does not work. Scan the card or type its code.")
    assert page.url == harness.url
    assert harness.posted == []
    assert page.is_visible("#scan-start")


@pytest.mark.parametrize(
    "showing",
    [f"https://portal.example/account/#{SECRET}", "https://portal.example/card/#too-short"],
    ids=["another-page", "a-short-secret"],
)
def test_a_code_that_is_not_a_card_is_refused_and_scanning_goes_on(open_page, harness, showing):
    page = open_page(showing=showing)
    page.click("#scan-start")
    wait_for_status(page, "That is not a sign-in card.")
    assert harness.posted == []
    assert page.is_visible("#scan-video") and page.is_visible("#scan-stop")
    assert page.is_hidden("#scan-start")
    page.click("#scan-stop")
    page.wait_for_function(ALL_TRACKS_ENDED)
    assert page.is_hidden("#scan-video") and page.is_hidden("#scan-stop")
    assert page.is_visible("#scan-start")
    assert page.evaluate("document.activeElement.id") == "scan-start"
    assert harness.posted == []


def test_a_camera_that_cannot_start_sends_the_learner_to_the_typed_code(open_page, harness):
    refuse = """if (window.isSecureContext) navigator.mediaDevices.getUserMedia = () =>
      Promise.reject(new DOMException("Permission denied", "NotAllowedError"));"""
    page = open_page(init_script=refuse)
    page.click("#scan-start")
    wait_for_status(page, "The camera could not start. Type the code on your card instead.")
    assert page.evaluate("document.activeElement.id") == "id_code"
    assert page.is_visible("#scan-start") and page.is_hidden("#scan-stop")
    assert page.is_hidden("#scan-video")
    assert harness.posted == []


# BarcodeDetector as some browsers have it: the first reads the card (jsQR is never fetched),
# the second claims QR codes but throws on every frame (jsQR takes over).
DETECTOR_THAT_READS = f"""window.BarcodeDetector = class {{
  static async getSupportedFormats() {{ return ["qr_code"]; }}
  async detect(source) {{ return [{{ rawValue: "{CARD_URL}", format: "qr_code" }}]; }}
}};"""
DETECTOR_THAT_THROWS = """window.BarcodeDetector = class {
  static async getSupportedFormats() { return ["qr_code"]; }
  async detect(source) { throw new DOMException("no backend", "NotSupportedError"); }
};"""


@pytest.mark.parametrize(
    "detector, jsqr_fetched",
    [(DETECTOR_THAT_READS, False), (DETECTOR_THAT_THROWS, True)],
    ids=["native-reads", "native-throws"],
)
def test_barcode_detector_is_used_where_it_works(open_page, harness, detector, jsqr_fetched):
    page = open_page(showing=CARD_URL, init_script=detector)
    page.click("#scan-start")
    page.locator("#received").wait_for(timeout=WAIT_MS)
    assert harness.posted == [{"csrfmiddlewaretoken": ["harness-token"], "secret": [SECRET]}]
    assert (JSQR in harness.requested) is jsqr_fetched
