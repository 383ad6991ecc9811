"""Whole journeys through the browser, against a live portal, the sandbox over HTTP and a real
task worker: what staff and learners do, step by step, and what they see.

Background work runs in `manage.py db_worker` processes (tests/workers.py) on the database
queue, as in production, not in the immediate backend the other tests use.
"""

import re
import time
from contextlib import ExitStack, nullcontext
from decimal import Decimal

import pytest
from playwright.sync_api import Page, expect

from assessments.child_words import focus_area_words
from assessments.models import AssessmentAttempt
from tests.browsing import browser_sign_in
from tests.factories import PASSWORD
from tests.journeys import LEARNER_PASSWORD, register_pupil
from tests.workers import db_worker_running

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

State = AssessmentAttempt.State

DATABASE_TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default", "imports", "media"],
    }
}
# A worker reads its settings from the environment: retry within seconds, not minutes.
WORKER_SETTINGS = {
    "DELIVERY_RETRY_BASE": "1",
    "DELIVERY_RETRY_CAP": "2",
    "SUBMISSION_QUIET_PERIOD": "0",
    "PARTNER_API_RETRY_MAX_ATTEMPTS": "1",
    "PARTNER_API_BREAKER_COOLDOWN": "2",
    "PARTNER_API_TIMEOUT": "2,5",
}
BACKGROUND_WORK_TIMEOUT = 90  # seconds: generous, the worker polls and backs off
UNAVAILABLE_BANNER = "The assessment service is unavailable at the moment."
ANSWER_NOT_SAVED = "Your answer could not be saved just now."


@pytest.fixture
def start_worker(settings, live_server, upstream):
    """Start `db_worker` processes on the database queue; all are stopped at teardown."""
    settings.TASKS = DATABASE_TASKS
    settings.DELIVERY_RETRY_BASE = 1  # the live portal's own first retry: a second from now
    settings.DELIVERY_RETRY_CAP = 2
    with ExitStack() as workers:

        def start(queue: str, **env: str):
            return workers.enter_context(
                db_worker_running(upstream.base_url, queue, env={**WORKER_SETTINGS, **env})
            )

        yield start


@pytest.fixture
def person(browser, live_server):
    """Open a browser of someone's own on the live portal; every one is closed at teardown."""
    opened: list[Person] = []

    def open_browser() -> "Person":
        opened.append(Person(browser, live_server.url))
        return opened[-1]

    yield open_browser
    for someone in opened:
        someone.close()


class Person:
    """Someone at a browser of their own (a fresh context: no cookies), watched for errors."""

    def __init__(self, browser, base_url: str) -> None:
        self.base_url = base_url
        self.context = browser.new_context()
        self.context.set_default_timeout(20_000)
        self.page: Page = self.context.new_page()
        self.server_errors: list[str] = []
        self.closed = False
        self.page.on("response", self._watch)

    def _watch(self, response) -> None:
        if response.status >= 500:
            self.server_errors.append(f"{response.status} {response.url}")

    def sign_in(self, username: str, password: str) -> Page:
        browser_sign_in(self.page, self.base_url, username, password)
        expect(self.page.get_by_role("button", name="Sign out")).to_be_visible()
        return self.page

    def go(self, path: str) -> Page:
        self.page.goto(self.base_url + path)
        return self.page

    def sees_no_error_page(self) -> None:
        text = self.page.inner_text("body")
        assert "Traceback" not in text and "Server Error" not in text, text[:2000]
        assert self.server_errors == []

    def close(self) -> None:
        if not self.closed:
            self.context.close()
            self.closed = True


# A question page, as the learner sees it ------------------------------------------------------

QUESTIONS_ON_PAGE = """() => [...document.querySelectorAll("form.question-form fieldset")].map(
  (fieldset) => ({
    question: fieldset.querySelector("legend").textContent.trim(),
    name: fieldset.querySelector("input[type=radio]").name,
    answers: [...fieldset.querySelectorAll("input[type=radio]")].map((input) => {
      const label = fieldset.querySelector(`label[for="${input.id}"]`);
      const words = [...label.childNodes].filter(
        (node) => !(node.classList && node.classList.contains("answer-icon"))
      );
      return {
        id: input.id,
        value: input.value,
        checked: input.checked,
        text: words.map((node) => node.textContent).join("").trim(),
      };
    }),
  })
)"""


def questions_on(page: Page) -> list[dict]:
    """Return the page's questions with their answers, in order."""
    return page.evaluate(QUESTIONS_ON_PAGE)


def checked_on(page: Page) -> dict[str, str]:
    """Return radio group name -> checked answer value, for the questions answered."""
    return {
        question["name"]: answer["value"]
        for question in questions_on(page)
        for answer in question["answers"]
        if answer["checked"]
    }


def pick(question: dict) -> int:
    """Choose an answer by the question's position, so the answers vary down the page."""
    return int(question["name"].removeprefix("q")) % len(question["answers"])


def choose(page: Page, question: dict, *, saved: bool = True) -> dict:
    """Click an answer's label as a person would; wait for the autosave to report on it."""
    answer = question["answers"][pick(question)]
    # The autosave script (deferred) has run by DOMContentLoaded; a click before it would be
    # saved only by the page's own buttons, and no request would come to wait for.
    page.wait_for_load_state("domcontentloaded")
    autosave = (
        page.expect_response(
            lambda response: (
                response.url.endswith("/answers/") and response.request.method == "POST"
            )
        )
        if saved
        else nullcontext()
    )
    with autosave:
        page.click(f"label[for='{answer['id']}']")
    status = page.locator("#autosave-status")
    if saved:
        expect(status).to_have_text("Saved")
    else:
        expect(status).to_contain_text(ANSWER_NOT_SAVED)
    expect(page.locator(f"#{answer['id']}")).to_be_checked()
    return {**answer, "question": question["question"], "name": question["name"]}


def expect_step(page: Page, number: int, of: int = 4) -> None:
    expect(page.locator("#step")).to_have_text(f"Step {number} of {of}")


def save_and_continue(page: Page) -> None:
    page.get_by_role("button", name="Save and continue").click()


def assessment_id_in(url: str) -> int:
    return int(re.search(r"/me/assessments/(\d+)/", url).group(1))


def wait_for_results(page: Page, worker, timeout: float = BACKGROUND_WORK_TIMEOUT) -> list[str]:
    """Reload the learner's results page until the results show; return what it said before."""
    deadline = time.monotonic() + timeout
    said = []
    while not page.locator("#results-heading").is_visible():
        heading = page.locator("main .panel h2")
        said.append(heading.inner_text() if heading.count() else page.inner_text("main")[:200])
        assert time.monotonic() < deadline, (
            f"no results after {timeout} s; the page said {said[-3:]}\n{worker.output()}"
        )
        page.wait_for_timeout(500)
        page.reload()
    return said


def reads_results_in_words(page: Page, expected: dict) -> None:
    """The learner reads their results without a score or risk level: the areas that could help."""
    section = page.locator("section.results")
    expect(section.locator("#results-heading")).to_be_visible()
    assert section.locator(".score").count() == 0
    assert "Risk level" not in section.inner_text()
    helped = section.locator("ul.help-areas li").all_inner_texts()
    # In the portal's words for the learner's age, never the service's capitals.
    words = {focus_area_words(a, primary=p) for a in expected["areas"] for p in (True, False)}
    assert set(helped) <= words, helped


def shown_results(page: Page) -> dict:
    """Return the score, risk level and focus areas the results section shows (staff pages)."""
    section = page.locator("section.results")
    return {
        "score": Decimal(section.locator(".score").inner_text().strip()),
        "risk": section.locator("dt:text-is('Risk level') + dd").inner_text().strip(),
        "areas": section.locator("table.focus-areas tbody th").all_inner_texts(),
    }


def upstream_results(upstream, assessment_id: int) -> dict:
    results = upstream.state.offers[assessment_id].results
    return {
        "score": Decimal(str(results["LOAScore"])).normalize(),
        "risk": results["RiskLevel"],
        "areas": [area["search_filter_name"] for area in results["focus_areas"]],
    }


def received_answers(upstream, assessment_id: int, chosen: dict[str, dict]) -> tuple[dict, dict]:
    """Return what the upstream recorded and what the learner chose: question id -> answer id."""
    attempt = AssessmentAttempt.objects.get(assessment_id=assessment_id)
    question_ids = {f"q{n}": q.id for n, q in enumerate(attempt.questions, start=1)}
    given = {question_ids[name]: answer["value"] for name, answer in chosen.items()}
    return upstream.state.offers[assessment_id].answers, given


def check_page_rows(page: Page) -> dict[str, str]:
    """Return question -> answer shown on the check-your-answers page."""
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll(".check-row")].map((row) => [
            row.querySelector("dt").textContent.trim(),
            row.querySelector("dd").textContent.trim(),
        ]))"""
    )


# Journey 1 ------------------------------------------------------------------------------------


def test_a_registered_learner_stops_resumes_elsewhere_submits_and_everyone_reads_the_results(
    person, live_server, upstream, staff, start_worker, settings
):
    settings.DASHBOARD_MIN_GROUP_SIZE = 1  # one learner in the cohort: show the count itself
    worker = start_worker("default")
    base = live_server.url

    # Staff register the learner through the form.
    office = person()
    page = office.sign_in(staff.username, PASSWORD)
    page.get_by_role("link", name="Register a learner").first.click()
    expect(page.locator("h1")).to_have_text("Register a learner")
    page.get_by_label("Username").fill("nia.north")
    page.get_by_label("Password", exact=True).fill(LEARNER_PASSWORD)
    date_of_birth = page.get_by_role("group", name="Date of birth")
    date_of_birth.get_by_label("Day").fill("27")
    date_of_birth.get_by_label("Month").fill("3")
    date_of_birth.get_by_label("Year").fill("2009")
    page.get_by_label("First name (optional)").fill("Nia")
    page.get_by_label("Last name (optional)").fill("North")
    page.get_by_label("Level").select_option("LOA_PARTNER_LEVEL2")
    page.get_by_role("button", name="Register learner").click()
    expect(page.locator("h1")).to_have_text("Nia North")
    expect(page.locator("main")).to_contain_text(
        "Nia North is registered and can sign in with the username nia.north"
    )

    # The learner signs in, starts, answers page 1 and part of page 2, and closes the browser.
    first = person()
    page = first.sign_in("nia.north", LEARNER_PASSWORD)
    expect(page).to_have_url(base + "/me/")
    page.get_by_role("button", name="Start my assessment").click()
    expect_step(page, 1)
    assessment_id = assessment_id_in(page.url)
    chosen: dict[str, dict] = {}
    page_one = questions_on(page)
    for question in page_one:
        chosen[question["name"]] = choose(page, question)
    save_and_continue(page)
    expect_step(page, 2)
    page_two = questions_on(page)
    for question in page_two[:2]:
        chosen[question["name"]] = choose(page, question)  # saved as chosen, no button
    first.sees_no_error_page()
    first.close()

    # Another browser: signed in again, the learner is taken back to where they stopped.
    second = person()
    page = second.sign_in("nia.north", LEARNER_PASSWORD)
    expect(page.locator("main")).to_contain_text("You have started this assessment.")
    page.get_by_role("link", name="Continue the assessment").click()
    expect_step(page, 2)
    assert checked_on(page) == {q["name"]: chosen[q["name"]]["value"] for q in page_two[:2]}
    page.get_by_role("button", name="Save and go to the previous page").click()
    expect_step(page, 1)
    assert checked_on(page) == {q["name"]: chosen[q["name"]]["value"] for q in page_one}
    save_and_continue(page)
    expect_step(page, 2)
    for question in questions_on(page)[2:]:
        chosen[question["name"]] = choose(page, question)
    save_and_continue(page)
    expect_step(page, 3)
    for question in questions_on(page):
        chosen[question["name"]] = choose(page, question)
    save_and_continue(page)
    expect_step(page, 4)
    # The connection drops as each answer is chosen: the learner is told, and the page's
    # Save button keeps them all.
    page.route("**/answers/", lambda route: route.abort())
    for question in questions_on(page):
        chosen[question["name"]] = choose(page, question, saved=False)
    page.unroute("**/answers/")
    save_and_continue(page)

    expect(page.locator("h1")).to_have_text("Check your answers before sending them")
    assert len(chosen) == 22
    assert check_page_rows(page) == {a["question"]: a["text"] for a in chosen.values()}
    expect(page.get_by_role("link", name=re.compile("^Change"))).to_have_count(22)

    # The results are not ready at once: the worker fetches them a moment later.
    upstream.state.inject_failure("results", status=503, times=1)
    page.get_by_role("button", name="Send my answers").click()
    expect(page).to_have_url(f"{base}/me/assessments/{assessment_id}/results/")
    said_before = wait_for_results(page, worker)
    assert set(said_before) <= {"Your answers have been sent"}, said_before
    expected = upstream_results(upstream, assessment_id)
    reads_results_in_words(page, expected)
    recorded, given = received_answers(upstream, assessment_id, chosen)
    assert recorded == given
    assert upstream.state.submissions_count(assessment_id) == 1
    # Fetched twice: refused in the learner's request, then by the worker (a reload never asks).
    assert upstream.state.count(endpoint="results") == 2, worker.output()
    page.get_by_role("link", name="Back to my assessments").click()
    expect(page.locator(".attempt-list")).to_contain_text("Results ready")
    second.sees_no_error_page()

    # Staff read the learner's results and see them counted on the dashboard.
    page = office.page
    page.get_by_role("link", name="Learners", exact=True).click()
    page.get_by_role("link", name="Nia North").click()
    history = page.locator("table").first
    expect(history).to_contain_text("Completed")
    expect(history).to_contain_text(expected["risk"])
    shown = shown_results(page)
    assert shown["score"] == expected["score"] and shown["risk"] == expected["risk"]
    assert sorted(shown["areas"]) == sorted(expected["areas"]) and len(expected["areas"]) == 7
    page.get_by_role("link", name=f"#{assessment_id}", exact=False).click()
    assert shown_results(page) == shown
    page.get_by_role("link", name="Dashboard").click()
    assessed = page.locator(".headline-figure", has_text="Learners assessed")
    expect(assessed.locator(".headline-count")).to_have_text("1")
    risk_row = page.locator("table", has_text="Learners by risk level").locator(
        "tbody tr", has_text=expected["risk"]
    )
    expect(risk_row.locator("td")).to_have_text("1")
    office.sees_no_error_page()


# Journey 2 ------------------------------------------------------------------------------------

IMPORT_FILE = (
    "username,password,dob,email,first_name,last_name,level\r\n"
    "ada.ash,Quiet-Lantern-River-7,2010-04-01,ada@example.org,Ada,Ash,LOA_PARTNER_LEVEL2\r\n"
    "ben.birch,Quiet-Lantern-River-8,2011-05-02,,Ben,Birch,LOA_PARTNER_LEVEL3\r\n"
    "bad.date,Quiet-Lantern-River-9,2010-13-40,,Bad,Date,\r\n"
    "cy.cedar,Quiet-Lantern-River-6,2008-06-03,,Cy,Cedar,\r\n"
)


def test_staff_register_a_class_from_a_file_and_watch_it_finish(
    person, live_server, upstream, staff, start_worker, settings
):
    # The worker hashes with the portal's own hasher: let this process check such a hash.
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        "accounts.hashers.PortalArgon2PasswordHasher",
    ]
    # One worker, so one row at a time, each taking a moment upstream: the bar has time to move.
    upstream.state.faults.add("create-learner", "latency", ms=3000)
    worker = start_worker("imports")
    base = live_server.url

    office = person()
    page = office.sign_in(staff.username, PASSWORD)
    page.get_by_role("link", name="Learners", exact=True).click()
    page.get_by_role("link", name="Register many learners from a file").click()
    page.locator("input[type=file]").set_input_files(
        files=[{"name": "new-class.csv", "mimeType": "text/csv", "buffer": IMPORT_FILE.encode()}]
    )
    page.get_by_role("button", name="Check the file").click()

    expect(page.locator("h1")).to_have_text("Check the file before registering")
    counts = page.locator(".import-counts")
    expect(counts).to_contain_text("4 learners in the file")
    expect(counts).to_contain_text("3 can be registered")
    expect(counts).to_contain_text("1 has problems")
    problem = page.locator("table.import-rows tbody tr")
    expect(problem).to_have_count(1)
    expect(problem).to_contain_text("bad.date")
    expect(problem).to_contain_text("dob: Enter a real date, written as day/month/year")
    expect(page.locator("main")).to_contain_text("Nothing has been sent to the assessment service")
    assert upstream.state.count(endpoint="create-learner") == 0

    page.get_by_role("button", name="Register 3 learners").click()
    expect(page.locator("h1")).to_have_text("Registering learners")
    bar = page.locator("progress#import-progress")
    expect(bar).to_have_attribute("max", "3")
    # The page says what is under way while the worker sends the rows (their passwords are
    # hashed once every row is sent), then that it is done.
    expect(page.locator("#import-summary")).to_contain_text(
        "Sending learners to the assessment service", timeout=BACKGROUND_WORK_TIMEOUT * 1000
    )
    midway = page.locator("#import-summary").inner_text()
    assert "of 3 learners done" in midway and page.eval_on_selector(
        "#import-progress", "bar => bar.value < bar.max"
    )
    expect(page.locator("h1")).to_have_text(
        "Import finished", timeout=BACKGROUND_WORK_TIMEOUT * 1000
    )
    finished = page.locator(".import-counts")
    expect(finished).to_contain_text("3 registered")
    expect(finished).to_contain_text("0 failed")
    expect(finished).to_contain_text("1 skipped as invalid")
    assert midway, "the progress summary said something while the import ran"
    assert upstream.state.count(endpoint="create-learner") == 3, worker.output()

    page.get_by_role("link", name="Learners", exact=True).click()
    expect(page.locator("p.count")).to_have_text("3 learners")
    table = page.locator("table")
    for username in ("ada.ash", "ben.birch", "cy.cedar"):
        expect(table).to_contain_text(username)
    expect(table).not_to_contain_text("bad.date")
    office.sees_no_error_page()

    pupil = person()
    page = pupil.sign_in("ben.birch", "Quiet-Lantern-River-8")
    expect(page).to_have_url(base + "/me/")
    expect(page.locator("h1")).to_have_text("My assessments")
    expect(page.get_by_role("button", name="Start my assessment")).to_be_visible()
    pupil.sees_no_error_page()


# Journey 3 ------------------------------------------------------------------------------------


def test_answers_given_while_the_service_is_down_reach_it_once_it_is_back(
    person, live_server, upstream, staff, start_worker, settings
):
    # The portal notices the outage at the first failed call and says so on every page.
    settings.PARTNER_API_BREAKER_THRESHOLD = 1
    settings.PARTNER_API_BREAKER_COOLDOWN = 5
    settings.DASHBOARD_MIN_GROUP_SIZE = 1
    pupil = register_pupil(staff, "dev.down")
    worker = start_worker("default")
    base = live_server.url

    learner = person()
    page = learner.sign_in(pupil.username, LEARNER_PASSWORD)
    page.get_by_role("button", name="Start my assessment").click()
    expect_step(page, 1)
    assessment_id = assessment_id_in(page.url)
    chosen: dict[str, dict] = {}
    for question in questions_on(page):
        chosen[question["name"]] = choose(page, question)
    save_and_continue(page)
    expect_step(page, 2)
    page_two = questions_on(page)
    for question in page_two[:3]:
        chosen[question["name"]] = choose(page, question)

    # The assessment service goes down: every connection is closed without an answer.
    upstream.state.faults.add("*", "drop")

    # The learner carries on: every answer is still saved, in the portal.
    for question in page_two[3:]:
        chosen[question["name"]] = choose(page, question)
    save_and_continue(page)
    for step in (3, 4):
        expect_step(page, step)
        for question in questions_on(page):
            chosen[question["name"]] = choose(page, question)
        save_and_continue(page)
    expect(page.locator("h1")).to_have_text("Check your answers before sending them")
    assert check_page_rows(page) == {a["question"]: a["text"] for a in chosen.values()}
    page.get_by_role("button", name="Send my answers").click()

    # Nothing is lost, and the page says so in plain words.
    expect(page).to_have_url(f"{base}/me/assessments/{assessment_id}/results/")
    main = page.locator("main")
    expect(main.locator(".panel h2")).to_have_text("Your answers are saved and will be sent")
    expect(main).to_contain_text("Nothing is lost")
    expect(main).to_contain_text("will be sent automatically")
    expect(main).to_contain_text("could not be reached or did not answer in time")
    expect(page.locator(".banner")).to_contain_text(UNAVAILABLE_BANNER)
    learner.sees_no_error_page()
    assert upstream.state.submissions_count() == 0
    # Trying again at once is safe: the answers stay waiting, and the page says why.
    page.get_by_role("button", name="Try sending them now").click()
    expect(main.locator(".panel h2")).to_have_text("Your answers are saved and will be sent")
    expect(page.locator(".banner")).to_contain_text(UNAVAILABLE_BANNER)
    learner.sees_no_error_page()
    page.get_by_role("link", name="Back to my assessments").click()
    expect(main).to_contain_text("Your answers are saved and are being sent.")

    # Meanwhile staff see the answers waiting, and the worker keeps trying.
    office = person()
    page = office.sign_in(staff.username, PASSWORD)
    page.get_by_role("link", name="Operations").click()
    waiting = page.locator("table").first.locator("tbody tr", has_text="dev.down")
    # (Or "Submitting", caught in the instant the worker is trying again.)
    expect(waiting).to_contain_text(re.compile("Waiting to be sent|Submitting"))
    expect(waiting).to_contain_text(re.compile("could not be reached|is unavailable"))
    page.get_by_role("link", name="Dashboard").click()
    pending = page.locator(".headline-figure", has_text="waiting to be delivered")
    expect(pending.locator(".headline-count")).to_have_text("1")
    deadline = time.monotonic() + BACKGROUND_WORK_TIMEOUT
    while upstream.state.count(endpoint="results") == 0:  # the worker's first try
        assert time.monotonic() < deadline, worker.output()
        time.sleep(0.2)
    assert upstream.state.submissions_count() == 0

    # The service comes back; the worker delivers without anyone doing anything.
    upstream.state.faults.clear()
    page = learner.go(f"/me/assessments/{assessment_id}/results/")
    wait_for_results(page, worker)
    recorded, given = received_answers(upstream, assessment_id, chosen)
    assert len(given) == 22
    assert recorded == given, worker.output()
    assert upstream.state.submissions_count(assessment_id) == 1
    reads_results_in_words(page, upstream_results(upstream, assessment_id))
    # Once the service answers again, the banner goes (after the breaker's short cool-down).
    deadline = time.monotonic() + 15
    while page.locator(".banner").count():
        assert time.monotonic() < deadline, "the unavailable banner stayed after recovery"
        page.wait_for_timeout(500)
        page.reload()
    learner.sees_no_error_page()

    page = office.go("/operations/")
    expect(page.locator("main")).to_contain_text("Nothing needs attention")
    office.sees_no_error_page()
    assert AssessmentAttempt.objects.get(assessment_id=assessment_id).state == State.COMPLETED
