"""Every page at 360 px (a phone) and 1280 px (a laptop): fits, big enough to tap and to read.

Each page is also saved as a full-page screenshot under tests/artifacts/<page>-<width>.png
for a reviewer to look at (the folder is ignored by git).

The rules, written out because WCAG leaves room for judgement:

- No horizontal scrolling: `document.documentElement.scrollWidth <= window.innerWidth`.
- Tap targets (WCAG 2.2 SC 2.5.8, 24 x 24 CSS px): every visible `a`, `button`, `input`,
  `select`, `textarea` and `summary` is at least 24 px wide and 24 px tall, except
  * a link laid out `display: inline` inside a block that has other text besides it: the
    "inline" exception of 2.5.8, a link in a sentence whose size the line of text sets;
  * elements no pointer can reach: positioned off the page (the skip link until it has
    focus) or clipped to 1 px for screen readers only.
- Readable text: every element with text of its own (a non-blank text node as a direct
  child) is rendered at 16 px or more; in an SVG chart, which scales with the screen, that is
  its font size times the chart's scale.
"""

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from imports.services import import_job_create_from_csv
from tests.browsing import fill_date, make_last_resort_pages_reachable
from tests.factories import (
    HEADER,
    PASSWORD,
    SLEEP,
    good_rows,
    make_attempt,
    make_sign_in_lock,
    mid_way,
    upload_file,
)
from tests.page_tour import (
    ANONYMOUS,
    LEARNER,
    Stop,
    fill_portal,
    submit_without_browser_checks,
    visit_as,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(__file__).parent / "artifacts"
SIZES = [(360, 640), (1280, 800)]


def click_and_wait(page, selector: str) -> None:
    page.click(selector)
    page.wait_for_load_state()


def open_column_help(page) -> None:
    page.click("details summary")
    assert page.is_visible("details dl")


def lock_sign_in(settings) -> Callable:
    """Fail to sign in until the username is locked, so the page says to wait."""

    def then(page) -> None:
        settings.LOGIN_FAILURE_LIMIT_PER_USERNAME = 1
        for _ in range(2):
            page.fill("#id_username", "locked.out")
            page.fill("#id_password", "not-the-password")
            submit_without_browser_checks(page)
        assert page.is_visible(".error-summary")

    return then


def submit_without_csrf_cookie(page) -> None:
    """Submit after the CSRF cookie went (cookies cleared, a long-open tab): the 403 page."""
    page.context.clear_cookies(name="csrftoken")
    page.fill("#id_username", "nobody.here")
    page.fill("#id_password", "not-the-password")
    with page.expect_response(lambda response: response.status == 403):
        submit_without_browser_checks(page)


def autosave(label: str, *, fail: bool = False) -> Callable:
    """Choose an answer and wait for the autosave script to say saved (or that it failed)."""

    def then(page) -> None:
        if fail:
            page.route("**/answers/", lambda route: route.abort())
        page.click(f"label[for={label}]")
        shown = "#autosave-status.autosave-failed" if fail else "#autosave-status:not(:empty)"
        page.locator(shown).wait_for(timeout=10000)
        page.unroute("**/answers/")

    return then


def session_dialog(settings) -> Callable:
    """Open the session-timeout warning (it comes 2 minutes before the end: after 1 s)."""

    def then(page) -> None:
        settings.LEARNER_IDLE_TIMEOUT = 121
        page.reload()
        page.get_by_role("alertdialog").wait_for(timeout=10000)

    return then


def expect_status(status: int, selector: str = "main form button[type=submit]") -> Callable:
    """Submit the page's form and land on a page answered with `status`."""

    def then(page) -> None:
        with page.expect_response(lambda response: response.status == status):
            page.click(selector)
        page.wait_for_load_state()

    return then


def add_failures_and_reload(page) -> None:
    """Give the operations page failed calls to list, then show it again."""
    from django.utils import timezone

    from partner_api.models import UpstreamFailure

    now = timezone.now()
    UpstreamFailure.objects.bulk_create(
        UpstreamFailure(
            endpoint=endpoint,
            method="POST",
            outcome=outcome,
            status=503,
            attempt=number,
            request_id=f"sbx-{number:08d}-4b1d-9c2e-7f3a",
            latency_ms=2000 * number,
            at=now - timedelta(minutes=number),
        )
        for number, (endpoint, outcome) in enumerate(
            [("submit-assessment", "HTTP 503"), ("results", "read timeout after 5 s")], start=1
        )
    )
    page.reload()


def more_stops(*, staff, learner, other_learner, settings, monkeypatch) -> dict:
    """The states beyond tests/page_tour.py's tour: who visits which, after the shared stops.

    The page of a failure no view expected (503) and of a crash (500) are reached by making
    the two delivery functions behind their buttons fail.
    """
    from django.contrib.auth.models import User

    from assessments.models import AssessmentAttempt, AssessmentResult, FocusArea
    from followups.models import FollowUp
    from imports.models import ImportJob, ImportRow
    from learners.models import Level

    make_last_resort_pages_reachable(monkeypatch)

    # The other learner's attempts, one in each state a result page shows.
    for assessment_id, state, error in [
        (46, "submitted", ""),
        (45, "submitting", ""),
        (43, "submit_pending", "The assessment service could not be reached."),
        (44, "rejected", "The assessment service refused the request: question q-9 is unknown."),
    ]:
        made = make_attempt(other_learner, assessment_id=assessment_id, state=state)
        AssessmentAttempt.objects.filter(pk=made.pk).update(last_error=error)
    needy = make_attempt(other_learner, assessment_id=47, state="completed")
    result = AssessmentResult.objects.create(
        attempt=needy, loa_score="23.75", risk_level="HIGH", trait_title="The night owl"
    )
    for position, (name, value) in enumerate(
        [(SLEEP, "yes"), ("EXAM ANXIETY & STRESS", "YES"), ("FOCUS", "Yes, urgently")]
    ):
        FocusArea.objects.create(
            result=result, name=name, needs_help=value, questions_count=4, position=position
        )

    running = import_job_create_from_csv(
        file=upload_file(HEADER + "\n" + good_rows(10)), created_by=staff
    )
    now, _ = mid_way(running, reason="The assessment service refused this username: already taken.")
    signing_in = import_job_create_from_csv(
        file=upload_file(HEADER + "\n" + good_rows(10, prefix="late")), created_by=staff
    )
    mid_way(signing_in)
    # Every row sent; most accounts still being set up (the slow password hashing).
    signing_in.rows.filter(state__in=["queued", "sending"]).update(state="registered")
    finished = import_job_create_from_csv(
        file=upload_file(
            "username,dob,first_name\nkit.kay,2012-02-02,Kit\nmax.moe,2013-03-03,Max\n"
        ),
        created_by=staff,
    )
    ImportJob.objects.filter(pk=finished.pk).update(
        state=ImportJob.State.FINISHED, confirmed_at=now, started_at=now, finished_at=now
    )
    first, second = finished.rows.values_list("pk", flat=True)
    ImportRow.objects.filter(pk=first).update(state="registered", signin_ready_at=now)
    ImportRow.objects.filter(pk=second).update(
        state="failed", reason="The assessment service could not be reached."
    )
    followup = FollowUp.objects.filter(learner=other_learner).first()
    no_role = User.objects.create_user("no.role", password=PASSWORD)
    make_sign_in_lock(kind="account_address", user=learner.user, address="192.0.2.10")
    make_sign_in_lock(kind="account", user=no_role, minutes=20)
    make_sign_in_lock(kind="address", address="2001:db8:85a3::8a2e:370:7334", minutes=90)

    def bad_due_date(page) -> None:
        fill_date(page, "due_date", 31, 2, 2026)
        submit_without_browser_checks(page, "main form button[type=submit]")

    return {
        None: [
            Stop("not-found", "/no-such-page/", status=404),
            Stop("login-locked", "/accounts/login/", lock_sign_in(settings)),
            Stop("csrf-failure", "/accounts/login/", submit_without_csrf_cookie),
        ],
        no_role: [Stop("no-access", "/", status=403)],
        staff: [
            Stop(
                "dashboard-filtered", f"/dashboard/?level={Level.SECONDARY.value}&from=2026-09-01"
            ),
            Stop("import-upload-error", "/learners/import/", submit_without_browser_checks),
            Stop("import-upload-help-open", "/learners/import/", open_column_help),
            Stop("import-running", f"/learners/import/{running.pk}/"),
            Stop("import-running-sign-in", f"/learners/import/{signing_in.pk}/"),
            Stop("import-finished-passwords", f"/learners/import/{finished.pk}/"),
            Stop("followup-item-error", f"/follow-ups/{followup.pk}/", bad_due_date),
            Stop(
                "password-reset-error",
                f"/learners/{learner.pk}/password/",
                submit_without_browser_checks,
            ),  # fmt: skip
            Stop("erase-confirm", f"/learners/{learner.pk}/erase/"),
            Stop("records-hold", f"/learners/{learner.pk}/hold/"),
            Stop("staff-attempt-refused", f"/learners/{other_learner.pk}/attempts/44/"),
            Stop("operations-failures", "/operations/", add_failures_and_reload),
            Stop("sign-in-locks", "/sign-in-locks/"),
            Stop(
                "sign-in-locks-lifted",
                "/sign-in-locks/",
                lambda page: click_and_wait(page, "main form[action$='/lift/'] button"),
            ),
        ],
        learner.user: [
            Stop("autosave-saved", "/me/assessments/41/page/1/", autosave("id_q1_1")),
            Stop("autosave-failed", "/me/assessments/41/page/1/", autosave("id_q2_2", fail=True)),
            Stop("check-send-error", "/me/assessments/41/check/", expect_status(400)),
            Stop("sign-out-confirm", "/accounts/logout/"),
            Stop("signed-out", "/accounts/logout/", submit_without_browser_checks),
        ],
        other_learner.user: [
            Stop("my-assessments-refused", "/me/"),
            Stop("results-needs-help-everywhere", "/me/assessments/47/results/"),
            Stop("results-sending", "/me/assessments/45/results/"),
            Stop("results-waiting-to-send", "/me/assessments/43/results/"),
            Stop("results-refused", "/me/assessments/44/results/"),
            Stop("upstream-error", "/me/assessments/46/results/", expect_status(503)),
            Stop("server-error", "/me/assessments/43/results/", expect_status(500)),
            # Last of all: every learner page after it would open the dialog too.
            Stop("session-dialog", "/me/", session_dialog(settings)),
        ],
    }


@pytest.fixture
def portal_with_data(upstream, staff, learner, other_learner, settings, monkeypatch):
    """The shared tour of tests/page_tour.py (test_lean_pages.py takes it too), then more."""
    shared = fill_portal(staff=staff, learner=learner, other_learner=other_learner)
    more = more_stops(
        staff=staff,
        learner=learner,
        other_learner=other_learner,
        settings=settings,
        monkeypatch=monkeypatch,
    )
    visitors = [(user, stops + more.pop(user, [])) for user, stops in shared]
    return visitors + list(more.items())


def visit_every_page(browser, live_server, visitors, width: int, height: int) -> Iterator:
    """Go through each visitor's pages in a fresh browser context; yield (stop, page)."""
    for user, stops in visitors:
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        yield from visit_as(page, live_server.url, user, stops)
        context.close()


SMALL_TARGETS_JS = """() => {
  const hiddenFromPointers = (el, box) =>
    box.right <= 0 || box.bottom <= 0 || (box.width <= 1 && box.height <= 1);
  const inSentence = (el) => {
    if (el.tagName !== "A" || getComputedStyle(el).display !== "inline") return false;
    let block = el.parentElement;
    while (block && getComputedStyle(block).display.startsWith("inline")) {
      block = block.parentElement;
    }
    return block.textContent.trim().length > el.textContent.trim().length;
  };
  const targets = document.querySelectorAll(
    "a[href], button, input:not([type=hidden]), select, textarea, summary");
  return [...targets].filter((el) => el.checkVisibility()).flatMap((el) => {
    const box = el.getBoundingClientRect();
    if (hiddenFromPointers(el, box) || inSentence(el)) return [];
    if (box.width >= 24 && box.height >= 24) return [];
    const name = (el.textContent.trim() || el.name || el.id || el.outerHTML).slice(0, 40);
    const size = `${box.width.toFixed(1)}x${box.height.toFixed(1)}`;
    return [`${el.tagName.toLowerCase()} "${name}" is ${size}`];
  });
}"""

SMALL_TEXT_JS = """() => {
  const small = [];
  const scaleOf = (el) => {
    const svg = el.closest("svg");
    if (!svg) return 1;
    const drawn = svg.getBoundingClientRect().width, units = svg.viewBox.baseVal.width;
    return units ? drawn / units : 1;
  };
  for (const el of document.body.querySelectorAll("*")) {
    if (el.closest("script, style, noscript, title") || !el.checkVisibility()) continue;
    const ownText = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    const box = el.getBoundingClientRect();
    if (!ownText || box.right <= 0 || (box.width <= 1 && box.height <= 1)) continue;
    const size = Math.round(parseFloat(getComputedStyle(el).fontSize) * scaleOf(el) * 10) / 10;
    const text = el.textContent.trim().slice(0, 30);
    if (size < 16) small.push(`${el.tagName.toLowerCase()} "${text}" is ${size}px`);
  }
  return small;
}"""


def problems_on(page) -> list[str]:
    """Everything on the page that breaks the rules in this module's docstring."""
    found = []
    if not page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"):
        width = page.evaluate("document.documentElement.scrollWidth")
        found.append(f"scrolls sideways: {width}px wide")
    found += page.evaluate(SMALL_TARGETS_JS)
    found += page.evaluate(SMALL_TEXT_JS)
    return found


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}px" for w, _ in SIZES])
def test_every_page_fits_the_screen_with_targets_to_tap_and_text_to_read(
    browser, live_server, portal_with_data, width, height
):
    ARTIFACTS.mkdir(exist_ok=True)
    problems, seen = [], []
    for stop, page in visit_every_page(browser, live_server, portal_with_data, width, height):
        seen.append(stop.name)
        page.screenshot(path=str(ARTIFACTS / f"{stop.name}-{width}.png"), full_page=True)
        problems += [f"{stop.name}: {problem}" for problem in problems_on(page)]

    assert len(seen) == len(set(seen)) == sum(len(stops) for _, stops in portal_with_data)
    assert len(seen) >= len(ANONYMOUS) + 18 + len(LEARNER) + 28
    assert all((ARTIFACTS / f"{name}-{width}.png").stat().st_size > 1000 for name in seen)
    assert problems == [], "\n".join(problems)


PROBLEM_BOXES_JS = """() => [...document.querySelectorAll(".import-problems li")].map((item) => {
  const box = item.getBoundingClientRect();
  return {text: item.textContent.trim(), left: box.left, right: box.right};
})"""


def test_every_problem_of_a_refused_row_is_in_sight_on_a_phone(browser, live_server, staff):
    long_name = "a.very.long.username.typed.without.a.single.space.by.someone!"
    rows = (
        f"{long_name},short,31/02/2010,not-an-email,,,Year 7\n"
        "fine.name,plum-kettle-river-42,2010-01-02,,,,\n"
    )
    job = import_job_create_from_csv(file=upload_file(HEADER + "\n" + rows), created_by=staff)
    context = browser.new_context(viewport={"width": 360, "height": 640})
    page = context.new_page()
    list(visit_as(page, live_server.url, staff, [Stop("preview", f"/learners/import/{job.pk}/")]))

    problems = page.evaluate(PROBLEM_BOXES_JS)
    context.close()

    assert len(problems) >= 4, problems  # username, password, dob, email, level
    outside = [p for p in problems if p["left"] < 0 or p["right"] > 360]
    assert outside == [], outside
