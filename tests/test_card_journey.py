"""The card journey for real: print a class's cards, read one back, scan it with a camera.

Chromium's fake camera plays a picture of the printed card (tests/fake_camera.py); the page's
script finds the QR code with the shipped decoder and POSTs its secret. Each refusal is met
through the same camera. The live server writes an access log for the whole journey, as
`runserver` does, and no log line may hold a card's secret or code.
"""

import logging
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.core.servers.basehttp import WSGIRequestHandler
from django.test.testcases import QuietWSGIRequestHandler
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from accounts.models import StaffRole
from learners.models import Level
from lessons.card_secrets import code_display, unseal
from lessons.models import SignInCard
from schools.models import PartnerSettings
from tests.browsing import browser_sign_in
from tests.factories import make_group, make_learner, make_staff, put_in_group
from tests.fake_camera import chromium_with_camera, write_y4m

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCAN_TIMEOUT_MS = 30_000  # a busy 2-core machine decodes a frame slowly; the wait ends early

# The card whose text starts with Amy's name: a card's random code may hold "AMY" too.
AMYS_CARD = re.compile(r"^\s*Amy\b")


@pytest.fixture
def access_log(monkeypatch, caplog):
    """The live server logs each request (method, path, status) as runserver does."""
    monkeypatch.setattr(QuietWSGIRequestHandler, "log_message", WSGIRequestHandler.log_message)
    caplog.set_level(logging.DEBUG)
    return caplog


def read_qr(png: Path) -> str:
    """Decode the QR code in a picture with zbarimg (Debian's zbar-tools)."""
    zbarimg = shutil.which("zbarimg")
    if zbarimg is None:
        pytest.fail("zbarimg is missing: apt-get install zbar-tools")
    found = subprocess.run(
        [zbarimg, "--quiet", "--raw", str(png)], capture_output=True, text=True, check=True
    )
    return found.stdout.strip()


def scan(camera, base: str):
    """Open /card/ in a fresh browser with the camera, press Scan; return the page it reached."""
    context = camera.new_context(viewport={"width": 800, "height": 900})
    context.grant_permissions(["camera"], origin=base)
    page = context.new_page()
    page.goto(base + "/card/")
    try:
        with page.expect_navigation(timeout=SCAN_TIMEOUT_MS):
            page.click("#scan-start")
    except PlaywrightTimeout:
        status = page.locator("#scan-status").inner_text()
        pytest.fail(f"the scan sent nothing in {SCAN_TIMEOUT_MS} ms; the page said {status!r}")
    page.wait_for_load_state()
    return page


def assert_refused_revealing_nothing(page, *secrets: str) -> None:
    text = page.inner_text("main")
    assert page.locator("h1").inner_text() == "Ask your teacher", text
    for word in ("Amy", "Bea", "2C", "Pupil", *secrets):
        assert word not in page.content(), word
    page.context.close()


def test_a_printed_card_scanned_by_a_camera_signs_in_only_in_an_open_lesson(
    browser, live_server, access_log, tmp_path, settings
):
    base = live_server.url
    # PORTAL_URL is the address pupils reach: here, the live server.
    settings.PORTAL_URL = base
    group = make_group("2C", level=Level.PRIMARY)
    teacher = make_staff("tess.teacher", role=StaffRole.TEACHER, groups=[group])
    amy, bea = make_learner("amy.pupil", "u-amy"), make_learner("bea.pupil", "u-bea")
    put_in_group(group, amy, bea)

    # The teacher prints the class's cards; one card is photographed as printed.
    staff = browser.new_page(viewport={"width": 1280, "height": 900})
    browser_sign_in(staff, base, teacher.username)
    staff.goto(base + f"/classes/{group.pk}/cards/")
    staff.emulate_media(media="print")
    amy_card = staff.locator(".sign-in-card", has_text=AMYS_CARD)
    picture = tmp_path / "amy-card.png"
    amy_card.screenshot(path=str(picture))
    staff.emulate_media(media="screen")
    card = SignInCard.objects.get(learner=amy, voided_at__isnull=True)
    secret, code = unseal(card.secret_encrypted), unseal(card.code_encrypted)
    assert code_display(code) in amy_card.inner_text()

    # What the printed QR holds: the card page, the secret after the '#', at least 128 bits.
    assert read_qr(picture) == f"{base}/card/#{secret}"
    assert len(secret) >= 22
    # The card held up to a 1280x720 camera, as the scanner asks for: at 640x480 its QR code
    # is about 3 pixels a module, where jsQR misses about one code in 150 (random secrets, no
    # camera noise), and a still picture then fails every frame.
    camera = chromium_with_camera(
        browser.browser_type,
        write_y4m(picture.read_bytes(), tmp_path / "amy-card.y4m", width=1280, height=720),
    )
    try:
        # Before the lesson: refused, revealing nothing.
        assert_refused_revealing_nothing(scan(camera, base), secret)

        # The teacher opens sign-in; Amy scans and taps "That's me".
        staff.goto(base + f"/classes/{group.pk}/")
        staff.fill("#id_minutes", "30")
        staff.click("#lesson form[action$='/sign-in/open/'] button")
        staff.wait_for_load_state()
        amy_page = scan(camera, base)
        thats_me = amy_page.get_by_role("button", name="That's me: Amy")
        with amy_page.expect_navigation():
            thats_me.click()
        assert amy_page.url == base + "/me/"
        assert "This is Amy's session." in amy_page.inner_text("header")

        # The roster shows her in, without the teacher reloading.
        roster = staff.locator("#lesson-roster")
        # (Exactly "Signed in": Bea's "Not signed in" is there from the start.)
        roster.get_by_text("Signed in", exact=True).wait_for(timeout=SCAN_TIMEOUT_MS)
        assert "Headless" not in roster.inner_text()  # a short description, not the raw agent
        assert "127.0.0.1" not in roster.inner_text()

        # The same card on a second device while she is in: refused, and shown to the teacher.
        assert_refused_revealing_nothing(scan(camera, base), secret)
        roster.get_by_text("Card refused: already in use").wait_for(timeout=SCAN_TIMEOUT_MS)

        # Printing again leaves her card working: the teacher ends her session, she rescans.
        staff.goto(base + f"/classes/{group.pk}/cards/")
        assert code_display(code) in staff.locator(".sign-in-card", has_text=AMYS_CARD).inner_text()
        staff.goto(base + f"/classes/{group.pk}/")
        with staff.expect_navigation():
            staff.locator("#lesson-roster button", has_text="End session").click()
        amy_page.reload()
        assert "/card/" in amy_page.url  # her session ended with the teacher's click
        amy_page.context.close()
        amy_page = scan(camera, base)
        with amy_page.expect_navigation():
            amy_page.get_by_role("button", name="That's me: Amy").click()
        assert amy_page.url == base + "/me/"

        # From outside the school's network: refused.
        PartnerSettings.objects.update(card_networks="10.0.0.0/8")
        staff.goto(base + f"/classes/{group.pk}/")
        with staff.expect_navigation():
            staff.locator("#lesson-roster button", has_text="End session").click()
        assert_refused_revealing_nothing(scan(camera, base), secret)
        PartnerSettings.objects.update(card_networks="")

        # After the lesson closes: her open page signs her out, and the card is refused.
        with staff.expect_navigation():
            staff.click("#lesson form[action$='/sign-in/close/'] button")
        amy_page.goto(base + "/me/")
        assert amy_page.url == base + "/card/?ended=1"
        amy_page.context.close()
        assert_refused_revealing_nothing(scan(camera, base), secret)

        # A voided card is refused even in a lesson.
        staff.goto(base + f"/classes/{group.pk}/")
        staff.click("#lesson form[action$='/sign-in/open/'] button")
        staff.wait_for_load_state()
        staff.goto(base + f"/learners/{amy.pk}/card/")
        with staff.expect_navigation():
            staff.click("main form[action$='/card/reissue/'] button")
        assert_refused_revealing_nothing(scan(camera, base), secret)
    finally:
        camera.close()
        staff.close()

    logged = [record.getMessage() for record in access_log.records]
    access = [line for line in logged if '"POST /card/' in line or '"GET /card/' in line]
    assert len(access) >= 10, logged  # the access log was written
    for line in logged:
        assert secret not in line and code not in line, line
