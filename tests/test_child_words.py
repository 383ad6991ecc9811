"""Every page a learner can reach, in every state, worded for their age (issue 31, part 5).

Each page is rendered for a primary pupil, a secondary pupil and a further-education learner.
A primary pupil's page never uses the portal's adult words, in its visible text or its title;
every learner's header names their school, not "Partner portal". Here: their home page and
starting an assessment; the pages of answering, results and faults are in
test_child_error_pages.py.
"""

import re
from collections.abc import Callable

import pytest
from django.utils import timezone

import assessments.services
from learners.models import Learner, Level
from partner_api import PartnerApiRejected, PartnerApiUnavailable
from partner_api.upstream import Outage
from schools.models import PartnerSettings
from tests.child_words_support import (
    CHECK,
    LEVELS,
    ME,
    State,
    adult_words_in,
    ask,
    attempt,
    check_worded_for_age,
    make_pupil,
    visible,
    with_result,
)
from tests.factories import DSL_ON_DUTY_EMAIL


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


def talk_page(learner, client, monkeypatch):
    return ask(client, "get", "/me/talk/"), "<h1"


def talk_sent(learner, client, monkeypatch):
    return ask(client, "post", "/me/talk/", data={"about": "friends"}), "<h1>We have told"


def talk_sent_unsafe(learner, client, monkeypatch):
    return ask(client, "post", "/me/talk/", data={"unsafe": "on"}), 'href="tel:999"'


def talk_choice_refused(learner, client, monkeypatch):
    return ask(client, "post", "/me/talk/", data={"contact": "Nobody offered"}), "from the list"


def privacy_page(learner, client, monkeypatch):
    return ask(client, "get", "/me/privacy/"), "<h1"


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
        (talk_page, 200),
        (talk_sent, 200),
        (talk_sent_unsafe, 200),
        (talk_choice_refused, 200),
        (privacy_page, 200),
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
