"""Every page a learner can reach, in every state, worded for their age (issue 31, part 5).

Each page is rendered for a primary pupil, a secondary pupil and a further-education learner.
A primary pupil's page never uses the portal's adult words, in its visible text or its title;
every learner's header names their school, not "Partner portal".
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser

import pytest
from django.db import OperationalError
from django.test import Client
from django.utils import timezone

import assessments.services
import assessments.views
from assessments.models import AssessmentAttempt
from learners.models import Learner, Level
from partner_api import PartnerApiRejected, PartnerApiUnavailable
from partner_api.upstream import Outage
from schools.models import PartnerSettings, School
from tests.factories import DSL_ON_DUTY_EMAIL, make_attempt, make_dsl_on_duty, make_result

State = AssessmentAttempt.State

SCHOOL = "Hazel Grove School"
LEVELS = (Level.PRIMARY, Level.SECONDARY, Level.FURTHER_EDUCATION)
# Words a primary pupil should never read (case-insensitive), and the name the staff's pages carry.
ADULT_WORDS = (
    "assessment service",
    "upstream",
    "portal",
    "session",
    "submission",
    "submit",
    "LOA",
    "risk level",
    "deliver",
    "error",
    "Partner portal",
)
ATTEMPT = 41
ME = "/me/"
RESULTS = f"/me/assessments/{ATTEMPT}/results/"
CHECK = f"/me/assessments/{ATTEMPT}/check/"


class _Text(HTMLParser):
    """Collect what a reader sees: the text outside scripts and styles, and the title."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.title: list[str] = []
        self.header: list[str] = []
        self._skip = 0
        self._in_title = False
        self._in_header = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "template"):
            self._skip += 1
        self._in_title = self._in_title or tag == "title"
        if tag == "header" or self._in_header:
            self._in_header += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style", "template"):
            self._skip -= 1
        if tag == "title":
            self._in_title = False
        if self._in_header:
            self._in_header -= 1

    def handle_data(self, data):
        if self._skip:
            return
        (self.title if self._in_title else self.text).append(data)
        if self._in_header:
            self.header.append(data)


def visible(html: str) -> tuple[str, str, str]:
    """Return a page's visible text, its title and its header's text, spaces tidied."""
    parser = _Text()
    parser.feed(html)
    tidy = lambda parts: " ".join(" ".join(parts).split())  # noqa: E731
    return tidy(parser.text), tidy(parser.title), tidy(parser.header)


def adult_words_in(text: str) -> list[str]:
    """Return the adult words in a text: from the start of a word, any case ("LOA" as itself)."""
    found = []
    for word in ADULT_WORDS:
        flags = 0 if word.isupper() else re.IGNORECASE
        if re.search(
            rf"(?<!\w){re.escape(word)}" + (r"(?!\w)" if word.isupper() else ""), text, flags
        ):
            found.append(word)
    return found


@dataclass
class Seen:
    status: int
    html: str


# The states a learner's pages can be in: each arranges the learner's records, then asks.
def ask(client: Client, method: str, path: str, **kwargs) -> Seen:
    response = getattr(client, method)(path, follow=method == "post", **kwargs)
    return Seen(response.status_code, response.content.decode())


def attempt(learner: Learner, state: str, **fields) -> AssessmentAttempt:
    made = make_attempt(learner, assessment_id=ATTEMPT, state=state)
    if fields:
        AssessmentAttempt.objects.filter(pk=made.pk).update(**fields)
    return made


def with_result(learner: Learner) -> None:
    made = attempt(learner, State.SUBMITTED, completed_at=timezone.now())
    make_result(made)


def nothing_yet(learner, client, monkeypatch):
    return ask(client, "get", ME), "Your first assessment"


def one_to_start(learner, client, monkeypatch):
    attempt(learner, State.AVAILABLE)
    return ask(client, "get", ME), "Start the assessment"


def in_progress(learner, client, monkeypatch):
    attempt(learner, State.IN_PROGRESS)
    return ask(client, "get", ME), "Continue the assessment"


def waiting_to_be_sent(learner, client, monkeypatch):
    attempt(learner, State.SUBMIT_PENDING, last_error="The assessment service is busy right now.")
    return ask(client, "get", ME), "Your answers are saved and are being sent."


def sent(learner, client, monkeypatch):
    attempt(learner, State.SUBMITTED, submitted_at=timezone.now())
    return ask(client, "get", ME), "Your results will be ready soon."


def refused(learner, client, monkeypatch):
    attempt(learner, State.REJECTED, last_error="The assessment service refused the request.")
    return ask(client, "get", ME), "See what to do next"


def results_ready(learner, client, monkeypatch):
    with_result(learner)
    return ask(client, "get", ME), "Read your results"


def results_hidden(learner, client, monkeypatch):
    with_result(learner)
    PartnerSettings.objects.update(hide_results_from_learners=True)
    return ask(client, "get", ME), "See what happens next"


def left_school(learner, client, monkeypatch):
    Learner.objects.filter(pk=learner.pk).update(left_at=timezone.now())
    return ask(client, "get", ME), "Your school's records say you have left."


def left_school_on_start(learner, client, monkeypatch):
    Learner.objects.filter(pk=learner.pk).update(left_at=timezone.now())
    return ask(client, "post", "/me/start/"), "<h1>Your school's records say you have left"


def not_open(learner, client, monkeypatch):
    type(learner.user).objects.filter(email=DSL_ON_DUTY_EMAIL).update(email="")
    return ask(client, "get", ME), "Not open yet."


def not_open_on_start(learner, client, monkeypatch):
    type(learner.user).objects.filter(email=DSL_ON_DUTY_EMAIL).update(email="")
    return ask(client, "post", "/me/start/"), "<h1>Not open yet</h1>"


def outage_on_start(learner, client, monkeypatch):
    def unavailable(**kwargs):
        raise PartnerApiUnavailable("next-assessment", status=503)

    monkeypatch.setattr(assessments.services, "attempt_start", unavailable)
    return ask(client, "post", "/me/start/"), 'class="message message-error"'


def refusal_on_start(learner, client, monkeypatch):
    def refused(**kwargs):
        raise PartnerApiRejected("next-assessment", status=403, upstream_message="Not allowed")

    monkeypatch.setattr(assessments.services, "attempt_start", refused)
    return ask(client, "post", "/me/start/"), 'class="message message-error"'


def nothing_to_take(learner, client, monkeypatch):
    def nothing(**kwargs):
        raise assessments.services.NothingToTake

    monkeypatch.setattr(assessments.services, "attempt_start", nothing)
    return ask(client, "post", "/me/start/"), "There is no assessment for you to take right now."


def outage_banner(learner, client, monkeypatch):
    monkeypatch.setattr("portal.context_processors.upstream_outage", lambda: Outage(until=None))
    return ask(client, "get", ME), 'class="banner banner-warning"'


def question_page(learner, client, monkeypatch):
    attempt(learner, State.IN_PROGRESS)
    return ask(client, "get", f"/me/assessments/{ATTEMPT}/page/1/"), "I sleep well"


def check_answers(learner, client, monkeypatch):
    attempt(learner, State.IN_PROGRESS)
    return ask(client, "get", CHECK), "Send my answers"


def check_answers_missing(learner, client, monkeypatch):
    attempt(learner, State.IN_PROGRESS)
    response = client.post(f"/me/assessments/{ATTEMPT}/submit/")
    assert response.status_code == 400
    return Seen(200, response.content.decode()), "I keep notes</a>"


def results_sending(learner, client, monkeypatch):
    attempt(learner, State.SUBMITTING)
    return ask(client, "get", RESULTS), "Your answers are being sent"


def results_waiting(learner, client, monkeypatch):
    attempt(learner, State.SUBMIT_PENDING, last_error="The assessment service is busy right now.")
    return ask(client, "get", RESULTS), f'action="/me/assessments/{ATTEMPT}/resend/"'


def results_resend_tried(learner, client, monkeypatch):
    attempt(learner, State.SUBMIT_PENDING)
    monkeypatch.setattr(assessments.views.delivery, "attempt_deliver", lambda **kw: None)
    return ask(client, "post", f"/me/assessments/{ATTEMPT}/resend/"), 'class="message'


def results_not_ready(learner, client, monkeypatch):
    attempt(learner, State.SUBMITTED, last_error="The assessment service had an internal error.")
    return ask(client, "get", RESULTS), "Your results are not ready yet."


def results_refused(learner, client, monkeypatch):
    attempt(learner, State.REJECTED, last_error="The assessment service refused the request.")
    return ask(client, "get", RESULTS), f'action="/me/assessments/{ATTEMPT}/refresh/"'


def results_refresh_failed(learner, client, monkeypatch):
    attempt(learner, State.REJECTED)

    def unavailable(**kwargs):
        raise PartnerApiUnavailable("view-assessment", status=503)

    monkeypatch.setattr(assessments.services, "attempt_refresh_content", unavailable)
    return ask(client, "post", f"/me/assessments/{ATTEMPT}/refresh/"), "message-error"


def results_shown(learner, client, monkeypatch):
    with_result(learner)
    return ask(client, "get", RESULTS), 'id="results-heading"'


def results_hidden_page(learner, client, monkeypatch):
    with_result(learner)
    PartnerSettings.objects.update(hide_results_from_learners=True)
    return ask(client, "get", RESULTS), "will look at them"


def talk_page(learner, client, monkeypatch):
    return ask(client, "get", "/me/talk/"), "<h1"


def privacy_page(learner, client, monkeypatch):
    return ask(client, "get", "/me/privacy/"), "<h1"


def not_found(learner, client, monkeypatch):
    return ask(client, "get", "/me/assessments/999/results/"), "Page not found"


def forbidden(learner, client, monkeypatch):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(learner.user)
    response = strict.post("/me/start/")
    return Seen(response.status_code, response.content.decode()), "<h1>"


def bad_request(learner, client, monkeypatch):
    response = client.post(
        "/me/start/", "a=%E9", content_type="application/x-www-form-urlencoded; charset=latin-1"
    )
    return Seen(response.status_code, response.content.decode()), "<h1>"


def server_error(learner, client, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(assessments.views, "current_attempt", broken)
    lenient = Client(raise_request_exception=False)  # as a real server: handler500 answers
    lenient.force_login(learner.user)
    response = lenient.get(ME)
    return Seen(response.status_code, response.content.decode()), "<h1>Something went wrong"


def database_away(learner, client, monkeypatch):
    def broken(*args, **kwargs):
        raise OperationalError("connection failed")

    monkeypatch.setattr(assessments.views, "current_attempt", broken)
    return ask(client, "get", ME), "<h1>"


PAGES: dict[str, tuple[Callable, int]] = {
    fn.__name__: (fn, status)
    for fn, status in (
        (nothing_yet, 200),
        (one_to_start, 200),
        (in_progress, 200),
        (waiting_to_be_sent, 200),
        (sent, 200),
        (refused, 200),
        (results_ready, 200),
        (results_hidden, 200),
        (left_school, 200),
        (left_school_on_start, 200),
        (not_open, 200),
        (not_open_on_start, 200),
        (outage_on_start, 200),
        (refusal_on_start, 200),
        (nothing_to_take, 200),
        (outage_banner, 200),
        (question_page, 200),
        (check_answers, 200),
        (check_answers_missing, 200),
        (results_sending, 200),
        (results_waiting, 200),
        (results_resend_tried, 200),
        (results_not_ready, 200),
        (results_refused, 200),
        (results_refresh_failed, 200),
        (results_shown, 200),
        (results_hidden_page, 200),
        (talk_page, 200),
        (privacy_page, 200),
        (not_found, 404),
        (forbidden, 403),
        (bad_request, 400),
        (server_error, 500),
        (database_away, 503),
    )
}
# Drawn without the header (they may not ask the database): only their title names the school.
NO_HEADER = {"bad_request", "server_error", "database_away"}
NO_SCHOOL_NAME = {"database_away"}  # the school's name is in the database that failed


@pytest.fixture
def pupil(db, learner, request) -> Learner:
    """The learner at the level the test asks for, at a school with its own name."""
    make_dsl_on_duty()
    School.objects.filter(pk=learner.school_id).update(name=SCHOOL)
    PartnerSettings.of(learner.school_id)
    Learner.objects.filter(pk=learner.pk).update(level=request.param)
    return Learner.objects.get(pk=learner.pk)


@pytest.mark.parametrize("pupil", LEVELS, indirect=True)
@pytest.mark.parametrize("name", PAGES)
def test_every_learner_page_is_worded_for_the_learners_age(name, pupil, client, monkeypatch):
    client.force_login(pupil.user)
    arrange, status = PAGES[name]

    seen, marker = arrange(pupil, client, monkeypatch)

    assert seen.status == status, seen.html[:3000]
    assert marker in seen.html, seen.html[:3000]
    text, title, header = visible(seen.html)
    if name not in NO_HEADER:
        assert SCHOOL in header and "Partner portal" not in header, header
        assert title.endswith(f"– {SCHOOL}"), title
    elif name not in NO_SCHOOL_NAME:
        assert title.endswith(f"– {SCHOOL}"), title
    if pupil.level == Level.PRIMARY:
        assert adult_words_in(text) == [], text
        assert adult_words_in(title) == [], title
        assert "tell your teacher" in text.lower() or name not in FAULTS, text
    else:
        assert "upstream" not in text.lower() and "Partner portal" not in title


# The pages that tell of something gone wrong: a primary pupil reads a step they can take.
FAULTS = {
    "forbidden",
    "outage_on_start",
    "refusal_on_start",
    "results_refresh_failed",
    "bad_request",
    "server_error",
    "database_away",
}


@pytest.mark.parametrize("pupil", [Level.PRIMARY], indirect=True)
def test_a_primary_pupils_sign_out_warning_is_in_short_child_words(pupil, client):
    client.force_login(pupil.user)
    attempt(pupil, State.IN_PROGRESS)

    html = client.get(CHECK).content.decode()

    meta = re.search(r'<meta name="learner-session"([^>]*)>', html)
    assert meta, html[:2000]
    words = meta.group(1)
    assert 'data-title="You will be signed out soon"' in words
    assert "Your answers are saved." in words
    assert adult_words_in(re.sub(r'data-[a-z-]+-url="[^"]*"', "", words)) == []


def test_staff_keep_the_partner_portal_header(staff_client):
    text, title, header = visible(staff_client.get("/learners/").content.decode())

    assert "Partner portal" in header and title.endswith("– Partner portal")
