"""The learner's question and results pages: rendered once, cheap to serve, same markup."""

import pytest
from django.test.signals import template_rendered
from django.urls import Resolver404, resolve
from django.utils import timezone

from accounts.idle import LAST_ACTIVITY_SESSION_KEY
from assessments import page_markup
from assessments.content import questions_to_json
from assessments.models import AssessmentAttempt, AttemptAnswer
from tests.factories import make_attempt, make_result, question
from tests.journeys import page_url

State = AssessmentAttempt.State

# The pages read their attempt by plain SQL, whose types differ by database (`backend`).
pytestmark = pytest.mark.backend


@pytest.fixture
def attempt(learner):
    return make_attempt(learner)


@pytest.fixture
def signed_in(learner_client, attempt):
    """The learner's client after one page view (the session's activity time is saved)."""
    learner_client.get(page_url(attempt))
    return learner_client


def test_every_answer_is_a_labelled_radio_in_a_fieldset_per_question(signed_in, attempt):
    html = signed_in.get(page_url(attempt)).content.decode()

    assert "<h1>Sleep</h1>" in html and "Step 1 of 2" in html
    assert html.count("<fieldset") == 2 and "<legend>I sleep well</legend>" in html
    assert 'name="q1" id="id_q1_1" value="q-sleep-a1">' in html
    assert '<label for="id_q1_1"><span class="answer-icon" aria-hidden="true">' in html
    assert html.count('type="radio"') == html.count("<label for=") == 4
    assert "I keep notes" not in html  # page 2


def test_the_saved_answers_are_checked_and_nothing_else(signed_in, attempt):
    AttemptAnswer.objects.create(attempt=attempt, question_id="q-wake", answer_id="q-wake-a2")

    html = signed_in.get(page_url(attempt)).content.decode()

    assert 'value="q-wake-a2" checked>' in html
    assert html.count(" checked") == 1


@pytest.fixture
def questions_rendered():
    """The first question of each page of questions rendered from its template, in order."""
    rendered: list[str] = []

    def note(sender, template, context, **kwargs):
        if template.name == page_markup.QUESTION_TEMPLATE:
            rendered.append(context["fields"][0]["label"])

    template_rendered.connect(note)
    yield rendered
    template_rendered.disconnect(note)


def test_the_question_markup_is_rendered_once_for_every_page_of_an_attempt(
    signed_in, attempt, questions_rendered
):
    page_markup.cache.clear()
    page_markup.RECENT_PAGES.clear()
    questions_rendered.clear()

    for number in (1, 2, 1, 2):
        assert signed_in.get(page_url(attempt, number)).status_code == 200

    assert questions_rendered == ["I sleep well", "I keep notes"]  # pages 1 and 2, once


def test_a_page_with_errors_is_the_same_markup_filled_with_the_errors(
    signed_in, attempt, monkeypatch
):
    templates = []
    real = page_markup.render_to_string
    monkeypatch.setattr(
        page_markup,
        "render_to_string",
        lambda name, context: templates.append(name) or real(name, context),
    )

    response = signed_in.post(page_url(attempt), {"continue": ""})

    html = response.content.decode()
    assert html.count('<div class="field field-error"') == 2
    assert '<fieldset aria-describedby="id_q1_error">' in html
    assert templates == [page_markup.QUESTION_ERRORS_TEMPLATE] * 2  # the fieldsets: as cached


def test_the_process_keeps_the_markup_of_the_latest_attempts_only(
    learner_client, learner, monkeypatch, questions_rendered
):
    monkeypatch.setattr(page_markup, "RECENT_PAGES_LIMIT", 2)
    page_markup.RECENT_PAGES.clear()
    oldest, *latest = [make_attempt(learner, assessment_id=number) for number in (51, 52, 53)]
    for attempt in (oldest, *latest):
        learner_client.get(page_url(attempt))
    page_markup.cache.clear()  # a shared cache may drop entries at any time
    questions_rendered.clear()

    for attempt in latest:
        assert "I sleep well" in learner_client.get(page_url(attempt)).content.decode()
    assert questions_rendered == []
    assert "I sleep well" in learner_client.get(page_url(oldest)).content.decode()
    assert questions_rendered == ["I sleep well", "I keep notes"]  # its two pages, again
    assert len(page_markup.RECENT_PAGES) == 2


def test_a_question_page_runs_a_fixed_number_of_queries(
    signed_in, attempt, django_assert_num_queries
):
    AttemptAnswer.objects.create(attempt=attempt, question_id="q-sleep", answer_id="q-sleep-a1")
    signed_in.get(page_url(attempt, 2))  # page 2's markup is cached like page 1's

    # The base page's: session, user with learner, upstream health (3; the health is cached
    # for two seconds outside tests), the schools (the header names the learner's; in the
    # shared cache outside tests); the page's own: the attempt with its saved answers (1).
    # No staff check for a learner and no session write on a page view.
    with django_assert_num_queries(5):
        response = signed_in.get(page_url(attempt, 2))
    assert response.status_code == 200


def test_a_page_view_does_not_save_the_session_again_within_a_minute(signed_in, attempt):
    response = signed_in.get(page_url(attempt))

    assert response.status_code == 200 and "<h1>Sleep</h1>" in response.content.decode()
    assert "sessionid" not in response.cookies
    assert signed_in.session[LAST_ACTIVITY_SESSION_KEY] == pytest.approx(
        timezone.now().timestamp(), abs=5
    )


def test_fetched_again_content_shows_the_new_questions(signed_in, attempt):
    signed_in.get(page_url(attempt))
    content = questions_to_json([question("q-new", "Focus", "A brand new question", 1)])
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(
        content=content, session="701", state_changed_at=timezone.now()
    )

    html = signed_in.get(page_url(attempt)).content.decode()

    assert "A brand new question" in html and "I sleep well" not in html


def test_upstream_text_is_escaped_and_cannot_check_a_radio(learner_client, learner):
    hostile = question(
        "q-x", "<b>Group</b>", 'Tricky <script>alert(1)</script> " checked x="', 1,
        copies=('" checked autofocus x="', "<img src=x onerror=alert(1)>"),
    )  # fmt: skip
    attempt = make_attempt(learner, content=questions_to_json([hostile]))

    html = learner_client.get(page_url(attempt)).content.decode()

    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<h1>&lt;b&gt;Group&lt;/b&gt;</h1>" in html
    assert " checked" not in html.replace("&quot; checked", "")


def test_an_incomplete_page_shows_the_errors_and_keeps_the_choice(signed_in, attempt):
    response = signed_in.post(page_url(attempt), {"q1": "q-sleep-a2", "continue": ""})

    html = response.content.decode()
    assert response.status_code == 200 and "<title>Error: Sleep" in html
    assert "The answers you chose on this page are saved." in html
    assert '<a href="#id_q2_1">Choose an answer to this question.' in html
    assert '<fieldset aria-describedby="id_q2_error">' in html
    assert 'value="q-sleep-a2" checked>' in html and html.count(" checked") == 1


def test_a_complete_page_saves_and_goes_on(signed_in, attempt):
    response = signed_in.post(
        page_url(attempt), {"q1": "q-sleep-a1", "q2": "q-wake-a2", "continue": ""}
    )

    assert response.url == page_url(attempt, 2)
    html = signed_in.get(page_url(attempt)).content.decode()
    assert 'value="q-sleep-a1" checked>' in html and 'value="q-wake-a2" checked>' in html


def test_a_page_out_of_range_is_not_found_and_a_sent_attempt_goes_to_its_state(signed_in, attempt):
    assert signed_in.get(page_url(attempt, 3)).status_code == 404
    assert signed_in.get("/me/assessments/999/page/1/").status_code == 404
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(state=State.SUBMITTED)
    response = signed_in.get(page_url(attempt))
    assert (
        response.status_code == 302 and response.url == f"/me/assessments/{attempt.assessment_id}/"
    )


def test_another_learners_attempt_is_not_found(client, other_learner, attempt):
    client.force_login(other_learner.user)

    assert client.get(page_url(attempt)).status_code == 404


def section(response) -> str:
    html = response.content.decode()
    return html[html.index('<section class="results"') : html.index("</section>")]


def test_the_results_page_shows_the_stored_results(learner_client, learner):
    attempt = make_attempt(learner, assessment_id=42, state=State.SUBMITTED)
    make_result(attempt)

    html = learner_client.get("/me/assessments/42/results/").content.decode()

    assert '<h2 id="results-heading">The &lt;planner&gt;</h2>' in html
    assert "<ol><li>Sleep more</li></ol>" in html
    # In words: the areas that could help, not a table of scores (those are for staff).
    assert '<ul class="help-areas">\n    <li>Sleep</li>\n  </ul>' in html and "Focus" not in html
    assert "61.5" not in html and "Medium" not in html


def test_the_results_page_runs_a_fixed_number_of_queries_once_rendered(
    learner_client, learner, django_assert_num_queries
):
    attempt = make_attempt(learner, assessment_id=42, state=State.SUBMITTED)
    make_result(attempt)
    first = section(learner_client.get("/me/assessments/42/results/"))

    # The base page's four (the schools among them), the attempt with its result, the partner's
    # settings and who the learner can talk to at school; the focus areas come with the
    # rendered section from the cache.
    with django_assert_num_queries(7):
        again = section(learner_client.get("/me/assessments/42/results/"))
    assert again == first and "<li>Sleep</li>" in again


def test_answers_waiting_to_be_sent_show_their_state_not_results(learner_client, learner):
    attempt = make_attempt(learner, assessment_id=43, state=State.SUBMIT_PENDING)
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(last_error="The service was busy.")

    html = learner_client.get("/me/assessments/43/results/").content.decode()

    assert "Your answers are saved and will be sent" in html and "The service was busy." in html
    assert 'action="/me/assessments/43/resend/"' in html and "Focus areas" not in html


def test_the_bare_view_exists_only_in_the_benchmark_urls():
    with pytest.raises(Resolver404):
        resolve("/bench/bare/")
    assert resolve("/bench/bare/", urlconf="bench.urls").url_name == "bench_bare"
