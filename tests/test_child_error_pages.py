"""The pages of answering, results and faults, worded for every learner's age (issue 31, part 5).

As test_child_words.py: each state's page for a primary pupil, a secondary pupil and a
further-education learner; a primary pupil never reads "Error", even on a question page sent
with an answer missing.
"""

from collections.abc import Callable

import pytest
from django.db import OperationalError
from django.test import Client

import assessments.services
import assessments.views
from learners.models import Learner, Level
from partner_api import PartnerApiUnavailable
from schools.models import PartnerSettings
from tests.child_words_support import (
    ATTEMPT,
    CHECK,
    LEVELS,
    ME,
    RESULTS,
    Seen,
    State,
    ask,
    attempt,
    check_worded_for_age,
    make_pupil,
    visible,
    with_result,
)


def question_page(learner, client, monkeypatch):
    attempt(learner, State.IN_PROGRESS)
    return ask(client, "get", f"/me/assessments/{ATTEMPT}/page/1/"), "I sleep well"


def question_page_missing(learner, client, monkeypatch):
    attempt(learner, State.IN_PROGRESS)
    response = client.post(f"/me/assessments/{ATTEMPT}/page/1/", {"continue": ""})
    return Seen(response.status_code, response.content.decode()), "Choose an answer to this"


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
        (question_page, 200),
        (question_page_missing, 200),
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
        (not_found, 404),
        (forbidden, 403),
        (bad_request, 400),
        (server_error, 500),
        (database_away, 503),
    )
}


@pytest.fixture
def pupil(db, learner, request) -> Learner:
    """The learner at the level the test asks for, at a school with its own name."""
    return make_pupil(learner, request.param)


@pytest.mark.parametrize("pupil", LEVELS, indirect=True)
@pytest.mark.parametrize("name", PAGES)
def test_every_learner_page_is_worded_for_the_learners_age(name, pupil, client, monkeypatch):
    client.force_login(pupil.user)
    arrange, status = PAGES[name]

    seen, marker = arrange(pupil, client, monkeypatch)

    check_worded_for_age(name, seen, marker, status, pupil.level)


@pytest.mark.parametrize("pupil", [Level.SECONDARY], indirect=True)
def test_an_older_learners_question_page_with_a_missing_answer_says_error(pupil, client):
    client.force_login(pupil.user)
    seen, marker = question_page_missing(pupil, client, None)

    assert seen.status == 200 and marker in seen.html
    text, title, header = visible(seen.html)
    assert title.startswith("Error: ") and "Error: Choose an answer" in text, (title, text)
