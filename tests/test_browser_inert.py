"""Upstream content in a real browser: whatever the upstream sends, no script runs.

The portal's pages are served by pytest-django's live server and opened in a real headless
Chromium (Debian's `chromium` package, driven by Playwright): a learner signs in through the
login form and opens the results of assessments whose every field, the three HTML fields
included, is full of the hostile vectors of tests/data/hostile_vectors.json (stored through
the portal's own results service from a simulated upstream), then a question page whose
questions, answers, group and icons are hostile too; staff open the same results. The
vectors try to call alert/confirm/prompt, set `window.__pwned`, change `document.title`,
fetch `/pwned` or load it as an image, frame, style sheet or media, and navigate away.

Each page is checked twice: with the Content-Security-Policy the portal sends (a violation
report means something tried to run, and fails the test) and with the browser told to ignore
it, so that the sanitizer and escaping are shown to hold without that second wall.

Without /usr/bin/chromium the tests are skipped with the reason "Chromium not installed";
CI installs it and sets REQUIRE_BROWSER=1, which turns that skip into a failure.
"""

import html
import json
import re
from urllib.parse import urlsplit

import pytest
import responses

from assessments.models import AssessmentAttempt, AssessmentResult
from kit.sanitize import sanitize_html
from tests.factories import PASSWORD, make_learner
from tests.hostile import HOSTILE

API_PREFIX = "/plapi/v1/partners"
FIRST_RESULTS_ID = 8100
QUESTIONS_ID = 8199
SETTLE_MS = 150  # time for image errors, animations, autofocus and the like to fire
# Elements the sanitized HTML may hold (docs/partner-api.md).
ALLOWED_IN_UPSTREAM_HTML = ["p", "ul", "ol", "li", "strong", "em", "b", "i", "br", "a"]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


# Hostile content, stored through the portal ----------------------------------------------------


def swallows_what_follows(vector: str) -> bool:
    """Return whether the vector, left open, hides whatever comes after it in a fragment."""
    return "SENTINEL" not in sanitize_html(vector + "<p>SENTINEL</p>")


def html_chunks() -> list[str]:
    """Split the corpus into fragments, each ending with at most one vector left open.

    A vector such as an unclosed comment or <plaintext> hides what follows it; put last in its
    fragment, it hides nothing else. Every vector reaches the browser this way.
    """
    open_ended = [vector for vector in HOSTILE if swallows_what_follows(vector)]
    closed = [vector for vector in HOSTILE if vector not in open_ended]
    count = max(len(open_ended), 3)
    count += -count % 3  # three HTML fields per results
    chunks: list[list[str]] = [[] for _ in range(count)]
    for index, vector in enumerate(closed):
        chunks[index % count].append(vector)
    for index, vector in enumerate(open_ended):
        chunks[index].append(vector)
    return ["\n".join(chunk) for chunk in chunks]


def every_vector(separator: str = " ") -> str:
    return separator.join(HOSTILE)


def results_body(chunks: list[str]) -> dict:
    signs, tips, description = chunks
    return {
        "LOAScore": 61.5,
        "RiskLevel": every_vector(),
        "TraitTitle": every_vector(),
        "TraitCopy": every_vector("\n"),
        "TraitSigns": signs,
        "TraitTips": tips,
        "ResultDescription": description,
        "focus_areas": [
            {
                "search_filter_name": vector,
                "needs_help": HOSTILE[-1 - number],
                "questions_count": 1,
            }
            for number, vector in enumerate(HOSTILE)
        ],
    }


def content_body(assessment_id: int) -> dict:
    if assessment_id != QUESTIONS_ID:
        questions = [
            {
                "id": "q1",
                "Question": "Ready?",
                "Group": "Start",
                "DisplayOrder": 1,
                "answers": [{"id": "a1", "DisplayOrder": 1, "AnswerCopy": "Yes"}],
            }
        ]
    else:
        questions = [
            {
                "id": f"q{number}",
                "Question": vector,
                "Group": "<script>window.__pwned=1</script><img src=/pwned?group>Habits",
                "DisplayOrder": number + 1,
                "answers": [
                    {"id": f"a{number}", "DisplayOrder": 1, "AnswerCopy": vector, "Icon": vector},
                    {"id": f"b{number}", "DisplayOrder": 2, "AnswerCopy": "No", "Icon": "moon"},
                ],
            }
            for number, vector in enumerate(HOSTILE)
        ]
    return {
        "questions": questions,
        "assessment_session": 7007,
        "assessment_info": {
            "Title": every_vector(),
            "Level": HOSTILE[0],
            "Version": 1,
            "id": assessment_id,
        },
    }


def normalized(url: str) -> tuple[str, ...]:
    """Return a URL as a browser requests it: scheme and host in lower case."""
    parts = urlsplit(url)
    return (parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query)


def store_hostile_assessments(settings, learner) -> list[int]:
    """Take assessments against a hostile simulated upstream; return their ids.

    Three end with results stored by the portal's results service (after the learner sends
    their answers); the last is left open on its question page.
    """
    from django.test import Client

    chunks = html_chunks()
    results_ids = [FIRST_RESULTS_ID + n for n in range(len(chunks) // 3)]
    offers = iter([*results_ids, QUESTIONS_ID])
    base_url = settings.PARTNER_API_BASE_URL.strip().rstrip("/")
    if not base_url.endswith(API_PREFIX):
        base_url += API_PREFIX

    def offer(request):
        body = {"status": every_vector(), "assessment_id": next(offers)}
        body["target_group"] = every_vector()
        return 200, {}, json.dumps(body)

    def content(request):
        return 200, {}, json.dumps(content_body(int(request.url.rsplit("/", 1)[1])))

    def results(request):
        number = int(request.url.rsplit("/", 1)[1]) - FIRST_RESULTS_ID
        return 200, {}, json.dumps(results_body(chunks[3 * number : 3 * number + 3]))

    client = Client()
    client.force_login(learner.user)
    prefix = re.escape(base_url) + "/assessments/"
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.add_callback(responses.GET, base_url + "/assessments/next-assessment", offer)
        mock.add_callback(responses.GET, re.compile(prefix + r"view-assessment/\d+"), content)
        mock.add(responses.POST, base_url + "/assessments/submit-assessment", json={"ok": 1})
        mock.add_callback(responses.GET, re.compile(prefix + r"results/\d+"), results)
        for assessment_id in results_ids:
            client.post("/me/start/")
            base = f"/me/assessments/{assessment_id}/"
            client.post(base + "page/1/", {"q1": "a1", "continue": ""})
            client.post(base + "submit/")
        client.post("/me/start/")
    for assessment_id in results_ids:
        result = AssessmentResult.objects.get(attempt__assessment_id=assessment_id)
        assert result.trait_signs_raw and result.focus_areas.count() == len(HOSTILE)
    attempt = AssessmentAttempt.objects.get(assessment_id=QUESTIONS_ID)
    assert attempt.state == AssessmentAttempt.State.IN_PROGRESS
    return results_ids


# Watching the browser ----------------------------------------------------------------------------

WATCH = """
window.__pwned = undefined;
window.__violations = [];
document.addEventListener('securitypolicyviolation', (event) => {
  window.__violations.push(`${event.violatedDirective} ${event.blockedURI} ${event.sample}`);
});
"""

DOM_PROBLEMS = """
(allowed) => {
  const problems = [];
  const urlAttributes = ['href', 'src', 'action', 'formaction', 'xlink:href', 'srcset',
                         'poster', 'data', 'background', 'codebase', 'dynsrc', 'lowsrc'];
  for (const element of document.querySelectorAll('*')) {
    for (const attribute of element.attributes) {
      const name = attribute.name.toLowerCase();
      const value = attribute.value.replace(/[\\s\\x00-\\x1f]/g, '').toLowerCase();
      if (name.startsWith('on') || name === 'style' || name === 'srcdoc') {
        problems.push(`<${element.localName} ${name}="${attribute.value.slice(0, 60)}">`);
      }
      if (urlAttributes.includes(name) && /^(javascript|vbscript|data):/.test(value)) {
        problems.push(`<${element.localName} ${name}="${attribute.value.slice(0, 60)}">`);
      }
    }
  }
  for (const script of document.scripts) {
    if (!script.src || new URL(script.src).origin !== location.origin
        || !new URL(script.src).pathname.startsWith('/static/') || script.text.trim()) {
      problems.push(`script ${script.outerHTML.slice(0, 80)}`);
    }
  }
  // The portal's own charts (svg.chart) hold only drawing elements and escaped text.
  const chartTags = ['svg', 'title', 'desc', 'g', 'rect', 'text', 'tspan', 'line', 'polyline',
    'circle'];
  for (const element of document.querySelectorAll('svg.chart, svg.chart *')) {
    const active = [...element.attributes].some(
      (a) => a.name.startsWith('on') || ['style', 'href', 'xlink:href', 'src'].includes(a.name));
    if (!chartTags.includes(element.localName) || active) {
      problems.push(`<${element.localName}> in a chart ${element.outerHTML.slice(0, 80)}`);
    }
  }
  const forbidden = 'iframe, frame, frameset, object, embed, applet, svg:not(.chart), math, base,'
    + ' template,'
    + ' noscript, style, video, audio, source, picture, portal, meta[http-equiv],'
    + ' link:not([rel=stylesheet]):not([rel=icon][href^="/static/"]),'
    + ' input[type=image], input[type=password], textarea, select';
  for (const element of document.querySelectorAll(forbidden)) {
    problems.push(`<${element.localName}> ${element.outerHTML.slice(0, 80)}`);
  }
  for (const form of document.forms) {
    const action = new URL(form.action, location.href);
    if (action.origin !== location.origin) problems.push(`form to ${form.action}`);
  }
  for (const element of document.querySelectorAll('.upstream-html *')) {
    if (!allowed.includes(element.localName)) {
      problems.push(`<${element.localName}> in upstream HTML`);
    }
  }
  for (const link of document.querySelectorAll('.upstream-html a[href]')) {
    // ":" is an address the browser cannot parse (such as "https:javascript:x"): inert.
    if (!/^(https?|mailto|):$/.test(link.protocol)) problems.push(`link ${link.href}`);
    if (link.rel !== 'noopener noreferrer') problems.push(`link rel ${link.rel}`);
  }
  return problems;
}
"""


class Watcher:
    """Record what a page does: dialogs, requests, console, errors and what a script left."""

    def __init__(self, live_url: str):
        self.origin = live_url.rstrip("/")
        self.problems: list[str] = []
        self.pages = 0

    def attach(self, page) -> None:
        page.on("dialog", self.on_dialog)
        page.on("request", self.on_request)
        page.on("console", self.on_console)
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))

    def on_dialog(self, dialog) -> None:
        self.problems.append(f"a {dialog.type} dialog opened: {dialog.message!r}")
        dialog.dismiss()

    def on_console(self, message) -> None:
        if "Content Security Policy" in message.text or "Refused to" in message.text:
            self.problems.append(f"console: {message.text[:200]}")

    def on_request(self, request) -> None:
        url, kind = request.url, request.resource_type
        parts = urlsplit(url)
        if "pwned" in url:
            self.problems.append(f"request to {url} ({kind})")
        elif url.startswith(self.origin + "/"):
            own_file = parts.path.startswith("/static/") and kind in (
                "stylesheet",
                "script",
                "image",
                "font",
            )
            favicon = parts.path in ("/favicon.ico", "/static/favicon.svg")
            if not (kind == "document" or own_file or favicon):
                self.problems.append(f"request to {url} ({kind})")
        else:  # not even an upstream's icon: the portal never shows one by address
            self.problems.append(f"request off the portal: {url} ({kind})")

    def route(self, route) -> None:
        """Let the portal's own requests through; answer any other with a network error."""
        if route.request.url.startswith(self.origin + "/"):
            route.continue_()
        else:
            route.abort()

    def visit(self, page, path: str, mode: str) -> None:
        """Open a page, let it settle, hover, scroll and tab over it, then inspect it."""
        response = page.goto(self.origin + path)
        assert response is not None and response.status == 200, (path, response and response.status)
        served_title = re.search(r"<title>(.*?)</title>", response.text(), re.S)
        page.wait_for_timeout(SETTLE_MS)
        # Move over the page and scroll it: handlers on hover or on scroll would fire now.
        size = page.viewport_size or {"width": 1280, "height": 720}
        page.mouse.move(size["width"] / 2, size["height"] / 2, steps=2)
        page.mouse.wheel(0, 20000)
        page.keyboard.press("Tab")
        self.pages += 1
        where = f"on {path} (CSP {mode})"
        if page.url != self.origin + path:
            self.problems.append(f"{where}: the page went to {page.url}")
            return
        pwned = page.evaluate("window.__pwned")
        if pwned is not None:
            self.problems.append(f"{where}: window.__pwned is {pwned!r}")
        served = html.unescape(served_title[1].replace("\r\n", "\n")) if served_title else ""
        if collapsed(page.title()) != collapsed(served.replace("\r", "\n")):
            self.problems.append(f"{where}: the title became {page.title()[:300]!r}")
        for violation in page.evaluate("window.__violations"):
            self.problems.append(f"{where}: CSP violation {violation}")
        for problem in page.evaluate(DOM_PROBLEMS, ALLOWED_IN_UPSTREAM_HTML):
            self.problems.append(f"{where}: {problem}")


def collapsed(text: str) -> str:
    """Return text with spaces collapsed, as document.title gives a title's text.

    (Chromium turns control characters into spaces too, so they count as spaces here.)
    """
    return re.sub(r"[\x00-\x20]+", " ", text).strip()


def sign_in(page, watcher: Watcher, username: str) -> None:
    page.goto(watcher.origin + "/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    assert "/accounts/login/" not in page.url, f"{username} could not sign in"


def test_no_upstream_script_runs_in_a_real_browser(browser, live_server, settings, staff):
    learner = make_learner("bea.browser", "u-bea")
    results_ids = store_hostile_assessments(settings, learner)
    watcher = Watcher(live_server.url)

    learner_paths = ["/me/"]
    for assessment_id in results_ids:
        learner_paths.append(f"/me/assessments/{assessment_id}/results/")
    learner_paths.append(f"/me/assessments/{QUESTIONS_ID}/page/1/")
    learner_paths.append(f"/me/assessments/{QUESTIONS_ID}/check/")
    staff_paths = [f"/learners/{learner.pk}/"]
    for assessment_id in [*results_ids, QUESTIONS_ID]:
        staff_paths.append(f"/learners/{learner.pk}/attempts/{assessment_id}/")

    # With the policy the portal sends, and with the browser ignoring it (the first wall alone).
    for mode in ("as served", "ignored"):
        for username, paths in (("bea.browser", learner_paths), (staff.username, staff_paths)):
            context = browser.new_context(bypass_csp=mode == "ignored")
            try:
                context.add_init_script(WATCH)
                context.route("**/*", watcher.route)
                page = context.new_page()
                watcher.attach(page)
                sign_in(page, watcher, username)
                for path in paths:
                    watcher.visit(page, path, mode)
            finally:
                context.close()

    assert watcher.pages == 2 * (len(learner_paths) + len(staff_paths))
    shown = "\n".join(watcher.problems[:40])
    assert not watcher.problems, f"{len(watcher.problems)} problem(s) in the browser:\n{shown}"


def test_the_watcher_sees_a_script_run(browser, live_server):
    # The checks above are only as good as the watcher: show it a page where scripts do run.
    watcher = Watcher(live_server.url)
    context = browser.new_context(bypass_csp=True)
    try:
        context.add_init_script(WATCH)
        context.route("**/*", watcher.route)
        page = context.new_page()
        watcher.attach(page)
        page.goto(live_server.url + "/accounts/login/")
        page.set_content(
            "<title>t</title><img src=x onerror=\"window.__pwned=1;alert('a');"
            "fetch('/pwned?x');document.title='pwned'\">"
        )
        page.wait_for_timeout(SETTLE_MS)
        assert page.evaluate("window.__pwned") == 1
        assert page.title() == "pwned"
    finally:
        context.close()
    assert any("dialog" in problem for problem in watcher.problems), watcher.problems
    assert any("/pwned" in problem for problem in watcher.problems), watcher.problems
