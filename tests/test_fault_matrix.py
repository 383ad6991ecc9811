"""The fault matrix: every upstream endpoint x every injected fault, through the portal's pages.

In each cell a staff member registers a learner (POST /learners/new/), the learner signs in,
starts (POST /me/start/), answers every page, sends the answers and reads the results, all with
Django's test client against the sandbox over real HTTP. One fault is injected on the endpoint
under test, just before the step that calls it, and clears by itself after one request. Each
cell checks:

(a) what the person saw at that step: never a server error (the test client re-raises view
    exceptions, and every response is checked for a 5xx), but a clear message and a way on;
(b) what is stored: no answer lost, no learner or attempt duplicated, a sensible state;
(c) that the journey completes once the fault has cleared, the way a person would retry (send
    the form again, press start again, the background sweep, "Check for results"), ending
    with the results shown and exactly one upstream submission.

The matrix is printed as a table in pytest's terminal summary at the end of the run (with or
without -s), failed cells included, so a reader sees the coverage at a glance.
"""

import html as html_lib
import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from assessments.delivery import attempts_sweep
from assessments.models import AssessmentAttempt
from learners.models import Learner
from sandbox.faults import ENDPOINTS  # the five endpoints of the spec
from tests.journeys import LEARNER_PASSWORD, answer_pages, attempt_url

State = AssessmentAttempt.State

KINDS = (
    "latency",
    "500",
    "502",
    "503",
    "429",
    "hang",
    "drop",
    "non_json",
    "missing_field",
    "processed_500",
)
# Options that keep the suite fast; the rest are the sandbox's defaults. A hang outlasts the
# short read timeout the cell sets.
FAULT_OPTIONS: dict[str, dict[str, Any]] = {
    "latency": {"ms": 150},
    "503": {"retry_after": 1},
    "429": {"retry_after": 1},
    "hang": {"seconds": 2},
}
SHORT_TIMEOUT = (1.0, 0.5)

# What the person is told, by fault (one wording for every page: partner_api/upstream.py).
UNREACHABLE = "could not be reached or did not answer in time"
BUSY = "busy right now"
INTERNAL = "had an internal error"
UNREADABLE = "could not read"
EXPECTED_MESSAGE = {
    "500": INTERNAL,
    "processed_500": INTERNAL,
    "502": UNREACHABLE,
    "503": UNREACHABLE,
    "hang": UNREACHABLE,
    "drop": UNREACHABLE,
    "429": BUSY,
    "non_json": UNREADABLE,
    "missing_field": UNREADABLE,
}
# The registration form says what a 503 means for the learner it was registering.
REGISTRATION_MESSAGE = {
    **EXPECTED_MESSAGE,
    "503": "was unavailable and turned the registration away",
}

# create-learner faults after which the upstream holds a learner the portal never heard of.
# (The sandbox's hang and drop act before any work, so they leave nothing behind.)
CREATED_UPSTREAM_ANYWAY = {"processed_500", "missing_field", "non_json processed"}

# Faults that should change nothing for the person: a submission the upstream recorded whose
# reply lacks its `status` (the portal relies on no status text, docs/partner-api.md) is a success.
HARMLESS = {("submit-assessment", "missing_field")}

REGISTRATION = {
    "username": "fay.matrix",
    "password": LEARNER_PASSWORD,
    "dob": "2009-03-27",
    "email": "fay@example.org",
    "first_name": "Fay",
    "last_name": "Matrix",
    "level": "LOA_PARTNER_LEVEL2",
}
SECOND_USERNAME = "fay.matrix2"


@dataclass(frozen=True)
class Fault:
    """One cell of the matrix: a fault on an endpoint, and whether the person should notice."""

    endpoint: str
    kind: str
    options: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    absorbed: bool = False  # retried away by the client: nothing to see

    @property
    def name(self) -> str:
        return self.label or self.kind

    @property
    def noticed(self) -> bool:
        return (
            self.kind != "latency"
            and not self.absorbed
            and (self.endpoint, self.kind) not in HARMLESS
        )


def _cell(endpoint: str, kind: str, **options: Any) -> Fault:
    return Fault(endpoint, kind, {**FAULT_OPTIONS.get(kind, {}), **options})


MATRIX = [_cell(endpoint, kind) for endpoint in ENDPOINTS for kind in KINDS] + [
    _cell("submit-assessment", "expired_session"),
    # A registration the upstream carried out but answered with a maintenance page.
    Fault("create-learner", "non_json", {"processed": True}, label="non_json processed"),
]


# The table --------------------------------------------------------------------------------

ROWS: list[dict[str, str]] = []
COLUMNS = (
    ("endpoint", "endpoint"),
    ("fault", "fault"),
    ("saw", "what the user saw at that step"),
    ("recovery", "once it cleared"),
    ("outcome", "final outcome"),
)
SAW_WIDTH = 96


def _format_table(rows: list[dict[str, str]]) -> str:
    widths = {key: max(len(title), *(len(row[key]) for row in rows)) for key, title in COLUMNS}
    line = "+".join("-" * (widths[key] + 2) for key, _ in COLUMNS)

    def render(values: dict[str, str]) -> str:
        return "|".join(f" {values[key]:<{widths[key]}} " for key, _ in COLUMNS)

    header = render({key: title for key, title in COLUMNS})
    # The matrix in endpoint order, then the cells with the client's retries on.
    order = {endpoint: index for index, endpoint in enumerate(ENDPOINTS)}
    rows = sorted(rows, key=lambda row: ("tries" in row["fault"], order.get(row["endpoint"], 9)))
    failed = sum(row["outcome"].startswith("FAILED") for row in rows)
    summary = f"{len(rows)} cells, {len(rows) - failed} completed, {failed} failed"
    return "\n".join(["", "FAULT MATRIX", header, line, *(render(row) for row in rows), summary])


class _MatrixPrinter:
    """A plugin registered at run time: prints the matrix in pytest's terminal summary."""

    def pytest_terminal_summary(self, terminalreporter):
        if ROWS:
            terminalreporter.write_line(_format_table(ROWS))


@pytest.fixture(scope="module", autouse=True)
def print_the_matrix(request):
    """Print the matrix at the end of the run, after the failures, with or without -s."""
    plugins = request.config.pluginmanager
    if not plugins.has_plugin("fault-matrix-printer"):
        plugins.register(_MatrixPrinter(), "fault-matrix-printer")


# The people and their browsers -------------------------------------------------------------


class Browser(Client):
    """A test client that fails the test on any server error."""

    def request(self, **request):
        response = super().request(**request)
        assert response.status_code < 500, f"{request.get('PATH_INFO')}: {response.status_code}"
        if response.get("Content-Type", "").startswith("text/html"):
            assert b"Traceback" not in response.content
        return response


@dataclass
class Journey:
    """One learner's way from registration to results, and what was noted on the way."""

    upstream: Any
    staff: Browser
    browser: Browser
    row: dict[str, str]
    username: str = REGISTRATION["username"]
    learner: Learner | None = None
    attempt: AssessmentAttempt | None = None
    chosen: dict[str, str] = field(default_factory=dict)

    def at(self, step: str) -> None:
        """Note the step under way: a failing cell's outcome names it."""
        self.row["outcome"] = f"FAILED {step}"

    def saw(self, text: str) -> None:
        self.row["saw"] = _shorten(text)

    def recovered(self, text: str) -> None:
        self.row["recovery"] = text

    def upstream_usernames(self) -> set[str]:
        with self.upstream.state.lock:
            return {learner.username for learner in self.upstream.state.learners.values()}


@pytest.fixture
def journey(upstream, staff) -> Journey:
    staff_browser = Browser()
    staff_browser.force_login(staff)
    row = {"endpoint": "-", "fault": "-", "saw": "", "recovery": "", "outcome": "FAILED"}
    ROWS.append(row)
    # The outcome stays FAILED unless the journey reaches the end.
    return Journey(upstream=upstream, staff=staff_browser, browser=Browser(), row=row)


def _start_row(journey: Journey, fault: Fault) -> None:
    journey.row.update(
        endpoint=fault.endpoint, fault=fault.name, saw="nothing unusual", recovery="-"
    )


# Reading pages ---------------------------------------------------------------------------


def _text(fragment: str) -> str:
    """Return the visible text of an HTML fragment, on one line."""
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def _shorten(text: str) -> str:
    return text if len(text) <= SAW_WIDTH else text[: SAW_WIDTH - 1] + "…"


def _first_sentence(text: str) -> str:
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    return match.group(1) if match else text


def said(page: str) -> str:
    """Return, briefly, what a page tells the person: errors, messages or where things stand.

    Buttons offered with a status panel are shown in brackets: they are the way on.
    """
    summary = re.search(r'<div class="error-summary".*?<ul>(.*?)</ul>', page, re.S)
    if summary:
        items = re.findall(r"<li>(.*?)</li>", summary.group(1), re.S)
        return "Form: " + " / ".join(_first_sentence(_text(item)) for item in items)
    messages = re.findall(r'<div class="message [^"]*"[^>]*>(.*?)</div>', page, re.S)
    if messages:
        return " / ".join(_first_sentence(_text(message)) for message in messages)
    results = re.search(r'<h2 id="results-heading">(.*?)</h2>', page, re.S)
    if results:
        return f"Results ({_text(results.group(1))})"
    panel = re.search(r'<div class="panel" role="\w+">(.*?)</div>', page, re.S)
    if panel:
        heading = re.search(r"<h2>(.*?)</h2>", panel.group(1), re.S)
        buttons = re.findall(r"<button[^>]*>(.*?)</button>", panel.group(1), re.S)
        offered = "".join(f" [{_text(button)}]" for button in buttons)
        return _text(heading.group(1) if heading else panel.group(1)) + offered
    return _text(page)[:SAW_WIDTH]


def start_button(page: str) -> str:
    """Return the label of the button that starts (again), or fail: there must be a way on."""
    form = re.search(r'<form method="post" action="/me/start/">(.*?)</form>', page, re.S)
    assert form, "no way to start again"
    button = re.search(r"<button[^>]*>(.*?)</button>", form.group(1), re.S)
    assert button
    return _text(button.group(1))


def _input_tag(page: str, name: str) -> str:
    match = re.search(rf'<input[^>]*\bname="{name}"[^>]*>', page)
    assert match, f"no {name} field on the page"
    return match.group(0)


def assert_typed_values_kept_except_the_password(page: str, form: dict[str, str]) -> None:
    for name in ("username", "email", "first_name", "last_name"):
        assert f'value="{form[name]}"' in _input_tag(page, name), name
    # The date of birth, sent whole, comes back in its three boxes.
    year, month, day = form["dob"].split("-")
    for part, typed in (("day", day), ("month", month), ("year", year)):
        assert f'value="{typed}"' in _input_tag(page, f"dob_{part}"), part
    assert re.search(rf'<option value="{form["level"]}"[^>]*\bselected', page)
    assert "value=" not in _input_tag(page, "password")


# Faults and the background -----------------------------------------------------------------


def inject(journey: Journey, fault: Fault) -> None:
    journey.upstream.state.faults.add(fault.endpoint, fault.kind, times=1, **fault.options)


def assert_the_fault_struck_and_cleared(journey: Journey, fault: Fault) -> None:
    assert (fault.endpoint, fault.kind) in journey.upstream.state.faults.applied()
    assert journey.upstream.state.faults.rules() == []


def sweep_later() -> dict[str, int]:
    """Run the background sweep as if the backoff had passed."""
    AssessmentAttempt.objects.filter(next_attempt_at__isnull=False).update(
        next_attempt_at=timezone.now() - timedelta(seconds=1)
    )
    return attempts_sweep()


def saved_answers(attempt: AssessmentAttempt) -> dict[str, str]:
    return dict(attempt.answers.values_list("question_id", "answer_id"))


# The steps ------------------------------------------------------------------------------


def register(journey: Journey, fault: Fault) -> None:
    """Staff register the learner; through a create-learner fault, as a person would."""
    journey.at("registering")
    form = dict(REGISTRATION)
    hit = fault.endpoint == "create-learner"
    if hit:
        inject(journey, fault)
    response = journey.staff.post("/learners/new/", form)
    if hit:
        assert_the_fault_struck_and_cleared(journey, fault)

    if hit and fault.noticed:
        page = response.content.decode()
        assert response.status_code == 200, said(page)
        journey.saw(said(page))
        errors = response.context["form"].non_field_errors()
        assert any(REGISTRATION_MESSAGE[fault.kind] in error for error in errors), said(page)
        assert_typed_values_kept_except_the_password(page, form)
        assert not Learner.objects.exists()
        assert not User.objects.filter(username__iexact=form["username"]).exists()

        # The staff member sends the same form again, with the password typed again.
        response = journey.staff.post("/learners/new/", form)
        if fault.name in CREATED_UPSTREAM_ANYWAY:
            # The upstream kept the first registration; nothing here knows its user_id, so
            # the username cannot be used again and the staff member must choose another.
            assert form["username"] in journey.upstream_usernames()
            page = response.content.decode()
            assert response.status_code == 200, said(page)
            username_errors = response.context["form"].errors.get("username", [])
            assert any("already taken" in error for error in username_errors), said(page)
            assert_typed_values_kept_except_the_password(page, form)
            assert not Learner.objects.exists()
            form["username"] = SECOND_USERNAME
            response = journey.staff.post("/learners/new/", form)
            journey.recovered("same username: taken; another username registered")
        else:
            journey.recovered("form sent again: registered")
    elif hit:
        journey.saw("registered at once")

    assert response.status_code == 302, said(response.content.decode())
    learner = Learner.objects.get()
    assert learner.username == form["username"] and learner.is_registered
    assert response.url == f"/learners/{learner.pk}/"
    assert "is registered" in said(journey.staff.get(response.url).content.decode())
    journey.username = form["username"]
    journey.learner = learner


def sign_in(journey: Journey) -> None:
    journey.at("signing in")
    response = journey.browser.post(
        "/accounts/login/", {"username": journey.username, "password": LEARNER_PASSWORD}
    )
    assert response.status_code == 302
    assert journey.browser.get("/").url == "/me/"


def start(journey: Journey, fault: Fault) -> None:
    """The learner starts; through a next or view fault, they are told and press start again."""
    journey.at("starting")
    hit = fault.endpoint in ("next-assessment", "view-assessment")
    if hit:
        inject(journey, fault)
    response = journey.browser.post("/me/start/")
    if hit:
        assert_the_fault_struck_and_cleared(journey, fault)

    if hit and fault.noticed:
        assert response.url == "/me/"
        page = journey.browser.get("/me/").content.decode()
        assert EXPECTED_MESSAGE[fault.kind] in said(page)
        journey.saw(f"{said(page)} [{start_button(page)}]")
        attempts = AssessmentAttempt.objects.filter(learner=journey.learner)
        if fault.endpoint == "next-assessment":
            assert not attempts.exists()
        else:
            offered = attempts.get()
            assert offered.state == State.AVAILABLE and not offered.has_content
        response = journey.browser.post("/me/start/")
        journey.recovered("pressed start again")
    elif hit:
        journey.saw("started at once")

    attempt = AssessmentAttempt.objects.get(learner=journey.learner)
    assert response.url == attempt_url(attempt)
    assert attempt.state == State.IN_PROGRESS and attempt.has_content
    journey.attempt = attempt


def answer_everything(journey: Journey) -> None:
    journey.at("answering")
    attempt = journey.attempt
    assert journey.browser.get(attempt_url(attempt)).url == attempt_url(attempt, "page/1/")
    answer_pages(journey.browser, attempt, choice=1)
    assert journey.browser.get(attempt_url(attempt)).url == attempt_url(attempt, "check/")
    journey.chosen = saved_answers(attempt)
    assert len(journey.chosen) == len(attempt.questions)


def send(journey: Journey, fault: Fault) -> None:
    """The learner sends the answers; submission and results are fetched in that one step."""
    journey.at("sending")
    attempt, upstream = journey.attempt, journey.upstream
    hit = fault.endpoint in ("submit-assessment", "results")
    if hit:
        inject(journey, fault)
    response = journey.browser.post(attempt_url(attempt, "submit/"))
    results_url = attempt_url(attempt, "results/")
    assert response.url == results_url
    if hit:
        assert_the_fault_struck_and_cleared(journey, fault)
    page = journey.browser.get(results_url).content.decode()
    attempt.refresh_from_db()
    assert saved_answers(attempt) == journey.chosen  # nothing lost, whatever happened

    if not (hit and fault.noticed):
        if hit:
            journey.saw(said(page))
        assert attempt.state == State.COMPLETED, said(page)
        return

    journey.saw(said(page))
    if fault.endpoint == "results":
        # The answers arrived; only the results are missing.
        assert attempt.state == State.SUBMITTED, said(page)
        assert "Your results are not ready yet" in page and "Check for results" in page
        assert upstream.state.submissions_count() == 1
        response = journey.browser.post(results_url)
        assert response.url == results_url
        journey.recovered('pressed "Check for results"')
    elif fault.kind == "expired_session":
        assert attempt.state == State.REJECTED, said(page)
        assert "did not accept your answers" in page and "Unknown or expired session" in page
        assert f'action="{attempt_url(attempt, "refresh/")}"' in page
        assert upstream.state.submissions_count() == 0
        response = journey.browser.post(attempt_url(attempt, "refresh/"))
        assert response.url == attempt_url(attempt)
        assert journey.browser.get(response.url).url == attempt_url(attempt, "check/")
        assert saved_answers(attempt) == journey.chosen
        journey.browser.post(attempt_url(attempt, "submit/"))
        journey.recovered("fetched it again (answers kept), sent again")
    else:
        # Ambiguous: the upstream may or may not have the answers. They wait to be sent.
        assert attempt.state == State.SUBMIT_PENDING, said(page)
        assert "Your answers are saved and will be sent" in page
        assert upstream.state.submissions_count() <= 1
        mine = journey.browser.get("/me/").content.decode()
        assert "Your answers are saved and are being sent" in mine
        assert sweep_later()["deliveries"] == 1
        journey.recovered("background sweep delivered them")


def finish(journey: Journey) -> None:
    """The results are shown, once, to the learner and to staff; nothing is doubled."""
    journey.at("reading results")
    attempt, upstream = journey.attempt, journey.upstream
    page = journey.browser.get(attempt_url(attempt, "results/")).content.decode()
    attempt.refresh_from_db()
    assert attempt.state == State.COMPLETED, said(page)
    risk_level = attempt.result.risk_level
    # The learner reads their results in words; the risk level is for staff.
    assert 'id="results-heading"' in page and "Risk level" not in page
    assert "Your answers are saved" not in page and "not ready yet" not in page
    staff_page = journey.staff.get(f"/learners/{journey.learner.pk}/").content.decode()
    assert f"<dt>Risk level</dt><dd>{risk_level}</dd>" in staff_page

    assert saved_answers(attempt) == journey.chosen
    assert Learner.objects.count() == 1 and User.objects.filter(learner__isnull=False).count() == 1
    assert AssessmentAttempt.objects.filter(learner=journey.learner).count() == 1
    assert upstream.state.submissions_count() == 1
    assert upstream.state.submissions_count(attempt.assessment_id) == 1
    # The strict sandbox answers 409 to a second submission, which the portal would take as
    # success: so also assert that nothing was ever posted after one had been accepted.
    duplicates = [
        status
        for method, endpoint, status in upstream.state.requests
        if endpoint == "submit-assessment" and status == 409
    ]
    assert duplicates == [], "a submission was posted again after it had been accepted"
    journey.row["outcome"] = f"results shown ({risk_level}), 1 submission"


def walk(journey: Journey, fault: Fault) -> None:
    _start_row(journey, fault)
    register(journey, fault)
    sign_in(journey)
    start(journey, fault)
    answer_everything(journey)
    send(journey, fault)
    finish(journey)


# The matrix ------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "fault", MATRIX, ids=[f"{fault.endpoint}-{fault.name.replace(' ', '_')}" for fault in MATRIX]
)
def test_every_fault_on_every_endpoint_is_explained_and_the_journey_then_completes(
    journey, fault, settings
):
    if fault.kind == "hang":
        settings.PARTNER_API_TIMEOUT = SHORT_TIMEOUT
    walk(journey, fault)


# With the client's retries on -------------------------------------------------------------


@pytest.fixture
def retries_on(settings):
    """Three attempts, no backoff, Retry-After honoured up to 2 s."""
    settings.PARTNER_API_RETRY_MAX_ATTEMPTS = 3
    settings.PARTNER_API_RETRY_BACKOFF = 0
    settings.PARTNER_API_RETRY_BACKOFF_CAP = 0
    settings.PARTNER_API_RETRY_AFTER_CAP = 2


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", ["next-assessment", "view-assessment", "results"])
def test_with_retries_on_a_single_503_on_a_read_is_absorbed_without_the_learner_noticing(
    journey, endpoint, retries_on
):
    fault = Fault(endpoint, "503", {"retry_after": 0}, label="503 (3 tries)", absorbed=True)
    _start_row(journey, fault)
    register(journey, fault)
    sign_in(journey)
    start(journey, fault)
    answer_everything(journey)
    send(journey, fault)
    assert journey.upstream.state.count(endpoint=endpoint) == 2  # the failure and the retry
    journey.recovered("retried at once by the client")
    finish(journey)


@pytest.mark.django_db
def test_with_retries_on_a_429_is_waited_out_for_as_long_as_retry_after_asks(journey, retries_on):
    fault = Fault(
        "view-assessment", "429", {"retry_after": 1}, label="429 (3 tries)", absorbed=True
    )
    _start_row(journey, fault)
    register(journey, fault)
    sign_in(journey)
    began = timezone.now()
    start(journey, fault)
    assert timezone.now() - began >= timedelta(seconds=0.9)
    assert journey.upstream.state.count(endpoint="view-assessment") == 2
    journey.recovered("client waited 1 s, retried")
    answer_everything(journey)
    send(journey, fault)
    finish(journey)


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["503", "drop"])
def test_with_retries_on_a_registration_that_may_have_arrived_is_never_sent_twice(
    journey, kind, retries_on
):
    options = {"retry_after": 0} if kind == "503" else {}
    fault = Fault("create-learner", kind, options, label=f"{kind} (3 tries)")
    _start_row(journey, fault)
    register(journey, fault)
    # The first POST was not retried; the second is the staff member's own.
    assert journey.upstream.state.count(endpoint="create-learner") == 2
    assert journey.upstream_usernames() == {REGISTRATION["username"]}
    sign_in(journey)
    start(journey, fault)
    answer_everything(journey)
    send(journey, fault)
    finish(journey)


@pytest.mark.django_db
def test_with_retries_on_a_submission_is_never_resent_by_the_client(journey, retries_on):
    fault = Fault("submit-assessment", "503", {"retry_after": 0}, label="503 (3 tries)")
    _start_row(journey, fault)
    register(journey, fault)
    sign_in(journey)
    start(journey, fault)
    answer_everything(journey)
    journey.at("sending")
    inject(journey, fault)
    journey.browser.post(attempt_url(journey.attempt, "submit/"))
    assert journey.upstream.state.count(endpoint="submit-assessment") == 1
    journey.attempt.refresh_from_db()
    assert journey.attempt.state == State.SUBMIT_PENDING
    page = journey.browser.get(attempt_url(journey.attempt, "results/")).content.decode()
    assert "Your answers are saved and will be sent" in page
    journey.saw(said(page))
    assert sweep_later()["deliveries"] == 1
    journey.recovered("not retried by the client; the sweep sent it")
    finish(journey)
