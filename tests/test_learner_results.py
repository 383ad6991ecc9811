"""A learner's own results page, in words for their age: what the partner lets them read, the
day they finished, who to talk to at school, the helplines, and what comes next."""

import re

import pytest
from django.test import Client
from django.utils import timezone
from playwright.sync_api import expect

from accounts.idle import LAST_ACTIVITY_SESSION_KEY
from assessments.delivery import attempt_deliver
from assessments.learner_results import WORDING_BY_LEVEL
from assessments.models import AssessmentAttempt
from classes.models import GroupMembership
from learners.models import Learner, Level
from schools.models import PartnerSettings
from tests.browsing import browser_sign_in, violations
from tests.factories import at, make_attempt, make_group, make_result, put_in_group
from tests.journeys import (
    LEARNER_PASSWORD,
    attempt_url,
    page_showing,
    ready_to_send,
    register_pupil,
)

State = AssessmentAttempt.State

RESULTS = "/me/assessments/42/results/"
CHILDLINE = 'Childline: call <a href="tel:08001111">0800 1111</a>, free, any time'
SHOUT = 'Shout: text SHOUT to <a href="sms:85258">85258</a>'
TRUSTED_ADULT = "you can talk to your teacher, or any adult at school you trust."


@pytest.fixture
def finished(learner) -> AssessmentAttempt:
    """The learner's attempt 42, finished on 25 November 2026 with results (SLEEP needs help)."""
    attempt = make_attempt(learner, assessment_id=42, state=State.SUBMITTED)
    make_result(attempt)
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(completed_at=at("2026-11-25", 10))
    return attempt


def partner_chooses(**choices) -> None:
    """Change the partner's settings as an admin would."""
    PartnerSettings.current()
    PartnerSettings.objects.update(**choices)  # the one school's


def at_level(learner: Learner, level: str) -> None:
    Learner.objects.filter(pk=learner.pk).update(level=level)


def help_list(html: str) -> list[str]:
    """Return the areas the page lists as things that could help."""
    listed = re.search(r'<ul class="help-areas">(.*?)</ul>', html, re.S)
    return re.findall(r"<li>(.*?)</li>", listed.group(1)) if listed else []


def contacts(html: str) -> list[str]:
    listed = re.search(r'<ul class="contacts">(.*?)</ul>', html, re.S)
    return re.findall(r"<li>(.*?)</li>", listed.group(1)) if listed else []


# What the learner reads of their results --------------------------------------------------------


def test_a_learner_reads_their_results_in_words_without_the_score_or_risk_level(
    learner_client, finished
):
    html = learner_client.get(RESULTS).content.decode()

    assert '<h2 id="results-heading">The &lt;planner&gt;</h2>' in html
    assert "You like lists." in html and "<ol><li>Sleep more</li></ol>" in html
    assert "<h3>Things that could help</h3>" in html and help_list(html) == ["Sleep"]
    for staff_only in ("61.5", "Medium", "LOA score", "Risk level", "<table"):
        assert staff_only not in html, staff_only


def test_a_learner_with_no_area_needing_help_is_told_so_kindly(learner_client, finished):
    finished.result.focus_areas.update(needs_help="No")

    html = learner_client.get(RESULTS).content.decode()

    assert help_list(html) == []
    assert "Your answers do not point to anything you need extra support with just now." in html


def test_the_partner_may_let_learners_read_their_score_and_risk_level(learner_client, finished):
    partner_chooses(show_scores_to_learners=True)

    html = learner_client.get(RESULTS).content.decode()

    assert '<dt>LOA score</dt><dd class="score">61.5</dd>' in html
    assert "<dt>Risk level</dt><dd>Medium</dd>" in html
    assert help_list(html) == ["Sleep"]


def test_the_partner_may_hide_results_and_the_learner_hears_their_answers_arrived(
    learner_client, finished
):
    partner_chooses(hide_results_from_learners=True, show_scores_to_learners=True)

    html = learner_client.get(RESULTS).content.decode()

    assert "<h2>Your answers have been received</h2>" in html
    assert "Your answers have arrived safely, and a member of staff will look at them." in html
    for result in ("planner", "You like lists.", "Sleep more", ">Sleep<", "61.5", "Medium"):
        assert result not in html, result
    assert 'id="results-heading"' not in html
    assert "You finished this assessment on 25 November 2026." in html
    assert TRUSTED_ADULT in html and CHILDLINE in html and SHOUT in html


@pytest.mark.backend  # plain SQL: the types each database returns
def test_the_page_says_the_day_the_learner_finished(learner_client, finished):
    html = learner_client.get(RESULTS).content.decode()

    assert '<p class="finished-on">You finished this assessment on 25 November 2026.</p>' in html


# Words for their age ----------------------------------------------------------------------------


def test_every_level_has_its_words():
    assert set(WORDING_BY_LEVEL) == set(Level.values)


def test_a_primary_pupil_reads_simpler_words_than_a_secondary_pupil(
    learner, learner_client, finished
):
    at_level(learner, Level.SECONDARY)
    secondary = learner_client.get(RESULTS).content.decode()
    at_level(learner, Level.PRIMARY)
    primary = learner_client.get(RESULTS).content.decode()

    assert "Here is what your answers suggest, and some ideas that could help." in secondary
    assert "You finished this assessment on 25 November 2026." in secondary
    assert "<h3>Things that could help</h3>" in secondary and "<h3>Tips</h3>" in secondary
    assert '<h2 id="support-heading">Who to talk to at school</h2>' in secondary

    assert "Thank you for answering the questions. Here is what your answers tell us." in primary
    assert "You finished on 25 November 2026." in primary
    assert "<h3>Things that could help you</h3>" in primary and "<h3>Things to try</h3>" in primary
    assert '<h2 id="support-heading">Who can help you at school</h2>' in primary
    assert "Here is what your answers suggest" not in primary
    # The upstream's own words stay as it wrote them, at every age.
    for upstream_text in ("The &lt;planner&gt;", "You like lists.", "Sleep more"):
        assert upstream_text in primary and upstream_text in secondary


def test_further_education_learners_read_an_adult_introduction(learner, learner_client, finished):
    at_level(learner, Level.FURTHER_EDUCATION)

    html = learner_client.get(RESULTS).content.decode()

    assert "Thank you for completing this assessment. Here is a summary" in html
    assert "Thank you for answering the questions." not in html


def test_a_learner_without_a_level_reads_the_secondary_words(learner, learner_client, finished):
    at_level(learner, "")

    html = learner_client.get(RESULTS).content.decode()

    assert "Here is what your answers suggest, and some ideas that could help." in html


# Who to talk to, and the helplines --------------------------------------------------------------


def test_the_learners_group_names_who_to_talk_to(learner, learner_client, finished):
    partner_chooses(school_contact="Mrs Khan, our safeguarding lead, in room 12")
    tutor_group = make_group("9 North")
    tutor_group.contact = "Mr Osei, your form tutor, in room 4"
    tutor_group.save()
    put_in_group(tutor_group, learner)
    old_group = make_group("8 North")
    old_group.contact = "Ms Ward, last year's tutor"
    old_group.save()
    put_in_group(old_group, learner)
    GroupMembership.objects.filter(group=old_group).update(left_at=timezone.now())

    html = learner_client.get(RESULTS).content.decode()

    assert contacts(html) == ["Mr Osei, your form tutor, in room 4"]
    assert "Mrs Khan" not in html and "Ms Ward" not in html


def test_each_of_the_learners_groups_with_a_contact_is_named_once(
    learner, learner_client, finished
):
    for name, contact in [
        ("9N", "Mr Osei"),
        ("Maths 9", "Ms Ali"),
        ("Art 9", ""),
        ("9Y", " Ms  Ali "),  # the same person, typed loosely
    ]:
        group = make_group(name)
        group.contact = contact
        group.save()
        put_in_group(group, learner)

    assert contacts(learner_client.get(RESULTS).content.decode()) == ["Mr Osei", "Ms Ali"]


def test_without_a_group_contact_the_partners_school_contact_is_named(
    learner, learner_client, finished
):
    put_in_group(make_group("9 North"), learner)  # a group that names nobody
    partner_chooses(school_contact="Mrs Khan, our safeguarding lead, in room 12")

    html = learner_client.get(RESULTS).content.decode()

    assert contacts(html) == ["Mrs Khan, our safeguarding lead, in room 12"]
    assert TRUSTED_ADULT not in html


def test_without_any_contact_the_learner_is_told_to_talk_to_an_adult_they_trust(
    learner_client, finished
):
    html = learner_client.get(RESULTS).content.decode()

    assert contacts(html) == []
    assert f"If anything is worrying you, or you would like some support, {TRUSTED_ADULT}" in html


@pytest.mark.parametrize(
    ("state", "last_error"),
    [
        (State.SUBMITTING, ""),
        (State.SUBMIT_PENDING, "The service could not be reached."),
        (State.SUBMITTED, ""),
        (State.REJECTED, "The service refused: question q-9 is unknown."),
    ],
)
def test_the_helplines_are_on_the_page_whatever_the_answers_state(
    learner, learner_client, state, last_error
):
    attempt = make_attempt(learner, assessment_id=43, state=state)
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(last_error=last_error)

    html = learner_client.get(attempt_url(attempt, "results/")).content.decode()

    assert "<h3>When school is closed</h3>" in html
    assert CHILDLINE in html and SHOUT in html and TRUSTED_ADULT in html


def test_the_helplines_are_shown_whatever_language_the_page_is_in(
    learner_client, finished, settings
):
    settings.LANGUAGES = [("en-gb", "English"), ("cy", "Welsh")]

    html = learner_client.get(RESULTS, HTTP_ACCEPT_LANGUAGE="cy").content.decode()

    assert '<html lang="cy">' in html
    assert CHILDLINE in html and SHOUT in html


def test_the_partners_own_helplines_are_listed_one_per_line(learner_client, finished):
    partner_chooses(
        helplines="Samaritans: call 116 123, any time\n\n  Papyrus HOPELINE247: 0800 068 4141  "
    )

    html = learner_client.get(RESULTS).content.decode()

    assert '<li>Samaritans: call <a href="tel:116123">116 123</a>, any time</li>' in html
    assert '<li>Papyrus HOPELINE247: <a href="tel:08000684141">0800 068 4141</a></li>' in html
    assert "Childline" not in html


def test_helplines_emptied_behind_the_forms_back_fall_back_to_the_defaults(
    learner_client, finished
):
    partner_chooses(helplines="  \n ")

    html = learner_client.get(RESULTS).content.decode()

    assert CHILDLINE in html and SHOUT in html


def test_a_helpline_is_shown_as_text_never_as_markup(learner_client, finished):
    partner_chooses(helplines='<a href="https://evil.example">Call</a> 0800 1111 <b>now</b>')

    html = learner_client.get(RESULTS).content.decode()

    assert (
        "&lt;a href=&quot;https://evil.example&quot;&gt;Call&lt;/a&gt; "
        '<a href="tel:08001111">0800 1111</a> &lt;b&gt;now&lt;/b&gt;'
    ) in html


# What comes next ------------------------------------------------------------------------------


@pytest.mark.backend  # plain SQL: the types each database returns
def test_another_assessment_is_offered_only_when_one_is_known_to_be_offered(
    learner, learner_client, finished
):
    nothing_offered = page_showing(learner_client, RESULTS, '<h2 id="results-heading">')
    make_attempt(learner, assessment_id=50, state=State.AVAILABLE)
    offered = learner_client.get(RESULTS).content.decode()

    assert "Start another assessment" not in nothing_offered
    assert 'action="/me/start/"' not in nothing_offered
    assert "Another assessment is ready for you" in offered
    assert re.search(
        r'<form method="post" action="/me/start/">.*?Start another assessment</button>', offered
    )


def test_after_finishing_my_assessments_leads_to_reading_the_results(learner_client, finished):
    html = learner_client.get("/me/").content.decode()

    assert f'<a class="button" href="{RESULTS}">Read your results</a>' in html
    assert "Start another assessment" not in html
    # Asking the upstream for another is a choice of the learner's, said as a question.
    assert "Check for another assessment" in html


def test_with_results_hidden_my_assessments_leads_to_what_happens_next(learner_client, finished):
    partner_chooses(hide_results_from_learners=True)

    html = learner_client.get("/me/").content.decode()

    assert f'<a class="button" href="{RESULTS}">See what happens next</a>' in html
    assert "Read your results" not in html and "Results ready" not in html


# The waiting page updates itself ----------------------------------------------------------------


@pytest.mark.parametrize("state", [State.SUBMITTING, State.SUBMIT_PENDING, State.SUBMITTED])
def test_a_page_of_answers_on_their_way_asks_the_portal_where_they_stand(
    learner, learner_client, state
):
    attempt = make_attempt(learner, assessment_id=43, state=state)

    html = learner_client.get(attempt_url(attempt, "results/")).content.decode()

    assert '<script src="/static/js/results_wait.js" defer></script>' in html
    assert 'data-status-url="/me/assessments/43/status/"' in html
    assert f'data-state="{state}"' in html and 'data-refresh-seconds="15"' in html
    assert 'data-arrived="Your results are ready." data-arrived-link="Read your results"' in html


def test_pages_with_nothing_on_its_way_do_not_ask(learner, learner_client, finished):
    make_attempt(learner, assessment_id=44, state=State.REJECTED)

    for path, marker in [
        (RESULTS, '<h2 id="results-heading">'),
        ("/me/assessments/44/results/", "The assessment service did not accept your answers"),
    ]:
        assert "results_wait.js" not in page_showing(learner_client, path, marker), path


def test_asking_where_answers_stand_reads_the_portal_and_never_the_upstream(
    client, staff, upstream
):
    attempt = ready_to_send(client, register_pupil(staff))
    upstream.state.inject_failure("submit-assessment", status=503, times=1)
    client.post(attempt_url(attempt, "submit/"))
    before = upstream.state.count()

    waiting = client.get(attempt_url(attempt, "status/")).json()
    page = client.get(attempt_url(attempt, "results/")).content.decode()

    assert waiting == {"state": "submit_pending", "waiting": True}
    assert "Your answers are saved and will be sent" in page
    assert upstream.state.count() == before

    client.post(attempt_url(attempt, "resend/"))  # delivered: the results arrive
    after = upstream.state.count()
    assert client.get(attempt_url(attempt, "status/")).json() == {
        "state": "completed",
        "waiting": False,
    }
    assert upstream.state.count() == after


def test_asking_where_answers_stand_keeps_no_idle_learner_signed_in(learner, learner_client):
    attempt = make_attempt(learner, assessment_id=43, state=State.SUBMITTED)
    learner_client.get("/me/")  # a page view records the learner's activity
    session = learner_client.session
    long_ago = session[LAST_ACTIVITY_SESSION_KEY] - 300
    session[LAST_ACTIVITY_SESSION_KEY] = long_ago
    session.save()

    learner_client.get(attempt_url(attempt, "status/"))
    assert learner_client.session[LAST_ACTIVITY_SESSION_KEY] == long_ago

    learner_client.get(attempt_url(attempt, "results/"))  # the learner's own doing counts
    assert learner_client.session[LAST_ACTIVITY_SESSION_KEY] > long_ago


def test_another_learners_answers_are_not_found(other_learner, client, finished):
    client.force_login(other_learner.user)

    assert client.get("/me/assessments/42/status/").status_code == 404
    assert client.post("/me/assessments/42/status/").status_code == 405


# In a browser: three ages of learner, and the waiting page -------------------------------------

WIDTHS = [{"width": 1280, "height": 800}, {"width": 360, "height": 640}]


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_pupils_of_every_age_send_their_answers_and_read_their_results(
    browser, live_server, upstream, staff
):
    partner_chooses(school_contact="Mrs Khan, our safeguarding lead, in room 12")
    pupils = {
        level: register_pupil(staff, username, level)
        for level, username in [
            (Level.PRIMARY, "pip.primary"),
            (Level.SECONDARY, "sam.secondary"),
            (Level.FURTHER_EDUCATION, "fay.further"),
        ]
    }
    tutor_group = make_group("9 North")
    tutor_group.contact = "Mr Osei, your form tutor, in room 4"
    tutor_group.save()
    put_in_group(tutor_group, pupils[Level.SECONDARY])
    put_in_group(make_group("Class 3", level=Level.PRIMARY), pupils[Level.PRIMARY])
    today = timezone.localdate()
    finished_on = f"{today.day} {today:%B %Y}"
    expected = {
        Level.PRIMARY: (f"You finished on {finished_on}.", "Mrs Khan", "answering the questions"),
        Level.SECONDARY: (
            f"You finished this assessment on {finished_on}.",
            "Mr Osei",
            "taking this assessment",
        ),
        Level.FURTHER_EDUCATION: (
            f"You finished this assessment on {finished_on}.",
            "Mrs Khan",
            "completing this assessment",
        ),
    }

    for level, pupil in pupils.items():
        attempt = ready_to_send(Client(), pupil)
        page = browser.new_page(viewport=WIDTHS[0])
        browser_sign_in(page, live_server.url, pupil.username, LEARNER_PASSWORD)
        page.goto(live_server.url + attempt_url(attempt, "check/"))
        page.get_by_role("button", name="Send my answers").click()

        expect(page).to_have_url(live_server.url + attempt_url(attempt, "results/"))
        expect(page.locator("#results-heading")).to_be_visible()
        result = AssessmentAttempt.objects.get(pk=attempt.pk).result
        main = page.locator("main").inner_text()
        finished, contact, introduction = expected[level]
        assert finished in main and contact in main and introduction in main, (level, main)
        assert "Childline: call 0800 1111, free, any time" in main, level
        assert page.locator("a[href='tel:08001111']").count() == 1
        assert page.locator(".score").count() == 0
        assert "LOA score" not in main and "Risk level" not in main
        assert not re.search(rf"\b{re.escape(result.risk_level)}\b", main), result.risk_level
        for width in WIDTHS:
            page.set_viewport_size(width)
            assert violations(page) == [], (level, width)

        page.get_by_role("link", name="Back to my assessments").click()
        expect(page.get_by_role("link", name="Read your results")).to_be_visible()
        assert page.get_by_role("button", name="Start another assessment").count() == 0
        page.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_waiting_page_says_when_results_arrive_and_only_ever_asks_the_portal(
    browser, live_server, upstream, staff
):
    pupil = register_pupil(staff, "wes.waiting", Level.SECONDARY)
    attempt = ready_to_send(Client(), pupil)
    page = browser.new_page(viewport=WIDTHS[1])
    page.clock.install()  # the page's timers run when the test says
    browser_sign_in(page, live_server.url, pupil.username, LEARNER_PASSWORD)
    upstream.state.inject_failure("submit-assessment", status=503, times=1)
    page.goto(live_server.url + attempt_url(attempt, "check/"))
    page.get_by_role("button", name="Send my answers").click()
    expect(page.locator("main .panel h2")).to_have_text("Your answers are saved and will be sent")
    calls = upstream.state.count()

    def fifteen_seconds_pass() -> dict:
        with page.expect_response(lambda response: "/status/" in response.url) as asked:
            page.clock.run_for(16_000)
        return asked.value.json()

    assert fifteen_seconds_pass() == {"state": "submit_pending", "waiting": True}
    assert fifteen_seconds_pass() == {"state": "submit_pending", "waiting": True}
    assert upstream.state.count() == calls  # asking where the answers stand never calls it
    assert page.locator(".results-news").count() == 0

    attempt_deliver(attempt_id=attempt.pk, force=True)  # the worker delivers meanwhile
    assert fifteen_seconds_pass() == {"state": "completed", "waiting": False}
    news = page.locator("#results-wait .panel[role=status] .results-news")
    expect(news).to_have_text("Your results are ready. Read your results")
    assert violations(page) == []
    news.get_by_role("link", name="Read your results").click()
    expect(page.locator("#results-heading")).to_be_visible()
    assert "results_wait.js" not in page.content()
    page.close()
