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
- Readable text: every element outside charts with text of its own (a non-blank text node
  as a direct child) is rendered at 16 px or more. Text inside an SVG chart is exempt: the
  chart is a picture that scales with the screen, and the table beside it gives every value
  as page text.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from learners.imports import import_job_create_from_csv
from tests.conftest import browser_sign_in
from tests.test_bulk_registration import GOOD_PASSWORD, HEADER, good_rows, upload_file
from tests.test_dashboard import completed
from tests.test_followups import SLEEP, flagged
from tests.test_page_rendering import make_attempt, make_result

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(__file__).parent / "artifacts"
SIZES = [(360, 640), (1280, 800)]


@dataclass(frozen=True)
class Stop:
    """One page in one state: a name for the screenshot and how to get there."""

    name: str
    path: str
    then: Callable | None = None  # what to do on the page to reach the state, such as submit


def submit_without_browser_checks(page, selector: str = "main button[type=submit]") -> None:
    """Submit the main form as it is, past the browser's own `required` checks, to see ours."""
    page.eval_on_selector("main form", "form => { form.noValidate = true; }")
    page.click(selector)
    page.wait_for_load_state()


def fill_wrong_password(page) -> None:
    page.fill("#id_username", "nobody.here")
    page.fill("#id_password", "not-the-password")
    submit_without_browser_checks(page)


ANONYMOUS = [
    Stop("login", "/accounts/login/"),
    Stop("login-error", "/accounts/login/", fill_wrong_password),
]


def staff_stops(*, trend_pk: int, followup_pk: int, import_pk: int) -> list[Stop]:
    return [
        Stop("dashboard", "/dashboard/"),
        Stop("dashboard-filter-error", "/dashboard/?from=2026-09-30&to=2026-09-01"),
        Stop("learner-list-empty", "/learners/?q=nobody-by-that-name"),
        Stop("learner-list", "/learners/"),
        Stop("learner-detail-trend", f"/learners/{trend_pk}/"),
        Stop("register-errors", "/learners/new/", submit_without_browser_checks),
        Stop("followup-queue", "/follow-ups/"),
        Stop("followup-item", f"/follow-ups/{followup_pk}/"),
        Stop("import-upload", "/learners/import/"),
        Stop("import-preview-bad-rows", f"/learners/import/{import_pk}/"),
        Stop("operations", "/operations/"),
    ]


LEARNER = [
    Stop("my-assessments", "/me/"),
    Stop("question", "/me/assessments/41/page/1/"),
    Stop(
        "question-error",
        "/me/assessments/41/page/1/",
        lambda page: submit_without_browser_checks(page, "main button[name=continue]"),
    ),
    Stop("check-answers", "/me/assessments/41/check/"),
    Stop("results", "/me/assessments/42/results/"),
]


def fill_portal(*, staff, learner, other_learner) -> list[tuple[object, list[Stop]]]:
    """Put something on every page; return who visits which pages (None: a visitor)."""
    make_attempt(learner, assessment_id=41)
    make_result(make_attempt(learner, assessment_id=42, state="submitted"))
    for day, score, risk in [("2026-09-10", "40.25", "HIGH"), ("2026-10-10", "71.5", "LOW")]:
        completed(other_learner, day, score=score, risk=risk)
    followup = flagged(other_learner, SLEEP)
    bad_rows = (
        "bad name!,plum-kettle-river-42,2010-01-02,,,,\n"
        f"email.bad,{GOOD_PASSWORD},2010-01-02,not-an-email,,,\n"
    )
    job = import_job_create_from_csv(
        file=upload_file(HEADER + "\n" + good_rows(2) + bad_rows), created_by=staff
    )
    return [
        (None, ANONYMOUS),
        (staff, staff_stops(trend_pk=other_learner.pk, followup_pk=followup.pk, import_pk=job.pk)),
        (learner.user, LEARNER),
    ]


@pytest.fixture
def portal_with_data(upstream, staff, learner, other_learner):
    return fill_portal(staff=staff, learner=learner, other_learner=other_learner)


def visit_every_page(browser, live_server, visitors, width: int, height: int) -> Iterator:
    """Go through each visitor's pages in a fresh browser context; yield (stop, page)."""
    for user, stops in visitors:
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        yield from visit_as(page, live_server.url, user, stops)
        context.close()


def visit_as(page, base: str, user, stops: list[Stop]) -> Iterator:
    if user is not None:
        browser_sign_in(page, base, user.username)
    for stop in stops:
        response = page.goto(base + stop.path)
        assert response.ok, f"{stop.name}: {response.status} {page.url}"
        if stop.then:
            stop.then(page)
        yield stop, page


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
  for (const el of document.body.querySelectorAll("*")) {
    if (el.closest("svg, script, style, noscript") || !el.checkVisibility()) continue;
    const ownText = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    const box = el.getBoundingClientRect();
    if (!ownText || box.right <= 0 || (box.width <= 1 && box.height <= 1)) continue;
    const size = parseFloat(getComputedStyle(el).fontSize);
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

    assert len(seen) == len(ANONYMOUS) + 11 + len(LEARNER)
    assert all((ARTIFACTS / f"{name}-{width}.png").stat().st_size > 1000 for name in seen)
    assert problems == [], "\n".join(problems)
