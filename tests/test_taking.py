"""The learner's taking flow against the sandbox: pages, saving, checking, submitting."""

import pytest
from django.utils.text import slugify

from assessments.models import AssessmentAttempt, AttemptAnswer
from assessments.services import attempt_start
from assessments.taking import question_pages
from tests.journeys import answer_pages, attempt_url, register_pupil

State = AssessmentAttempt.State


@pytest.fixture
def pupil(upstream, staff, client):
    """A learner registered upstream through the portal, signed in."""
    learner = register_pupil(staff)
    client.force_login(learner.user)
    return learner


@pytest.fixture
def attempt(pupil, client) -> AssessmentAttempt:
    client.post("/me/start/")
    return AssessmentAttempt.objects.get(learner=pupil)


def test_pages_follow_the_groups_in_display_order_with_labelled_radios(client, attempt):
    pages = question_pages(attempt)
    assert len(pages) > 1
    orders = [e.question.display_order for page in pages for e in page.questions]
    assert orders == sorted(orders)
    html = client.get(attempt_url(attempt, "page/1/")).content.decode()
    assert f"Step 1 of {len(pages)}" in html
    assert f"<h1>{pages[0].group}</h1>" in html
    first = pages[0].questions[0].question
    assert f"<legend>{first.text}</legend>" in html
    for answer in first.answers:
        assert f'value="{answer.id}"' in html
        assert answer.copy in html
    assert html.count('type="radio"') == sum(len(e.question.answers) for e in pages[0].questions)
    assert html.count("<label for=") == html.count('type="radio"')


def test_it_keeps_the_answers_given_when_a_page_is_incomplete(client, attempt):
    page = question_pages(attempt)[0]
    first, second = page.questions[0], page.questions[1]
    response = client.post(
        attempt_url(attempt, "page/1/"),
        {f"q{first.position}": first.question.answers[2].id, "continue": ""},
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "There is a problem" in html and "The answers you chose on this page are saved" in html
    assert f'href="#id_q{second.position}_1"' in html
    saved = dict(attempt.answers.values_list("question_id", "answer_id"))
    assert saved == {first.question.id: first.question.answers[2].id}


def test_it_refuses_an_answer_that_is_not_the_questions(client, attempt):
    pages = question_pages(attempt)
    first = pages[0].questions[0]
    foreign = pages[1].questions[0].question.answers[0].id
    response = client.post(
        attempt_url(attempt, "page/1/"), {f"q{first.position}": foreign, "continue": ""}
    )
    assert "Choose one of the answers shown." in response.content.decode()
    assert not attempt.answers.exists()


def test_save_and_come_back_later_returns_to_my_assessments(client, attempt):
    first = question_pages(attempt)[0].questions[0]
    response = client.post(
        attempt_url(attempt, "page/1/"),
        {f"q{first.position}": first.question.answers[0].id, "save_and_exit": ""},
    )
    assert response.url == "/me/"
    page = client.get("/me/").content.decode()
    assert "Your answers are saved" in page and "Continue the assessment" in page
    assert attempt.answers.count() == 1


def test_submission_is_refused_locally_naming_what_is_missing(client, attempt, upstream):
    answer_pages(client, attempt, upto=1)
    pages = question_pages(attempt)
    missing = [e.question for page in pages[1:] for e in page.questions]
    response = client.post(attempt_url(attempt, "submit/"))
    assert response.status_code == 400
    html = response.content.decode()
    assert f"{len(missing)} questions still need an answer" in html
    for question in missing:
        assert question.text in html
    assert upstream.state.count(endpoint="submit-assessment") == 0
    attempt.refresh_from_db()
    assert attempt.state == State.IN_PROGRESS


def test_check_answers_lists_every_answer_with_a_change_link(client, attempt):
    answer_pages(client, attempt, choice=3)
    html = client.get(attempt_url(attempt, "check/")).content.decode()
    for page in question_pages(attempt):
        change = attempt_url(attempt, f"page/{page.number}/?from=check")
        for entry in page.questions:
            position = entry.position
            assert f'href="{change}&amp;q={position}#id_q{position}"' in html
        for entry in page.questions:
            assert entry.question.answers[3].copy in html


def test_after_a_change_the_learner_is_back_at_that_row_of_check_answers(client, attempt):
    answer_pages(client, attempt, choice=3)
    page = question_pages(attempt)[1]
    changed = page.questions[1]
    answers = {f"q{e.position}": e.question.answers[3].id for e in page.questions}
    answers[f"q{changed.position}"] = changed.question.answers[0].id
    response = client.post(
        attempt_url(attempt, f"page/2/?from=check&q={changed.position}"),
        {**answers, "continue": ""},
    )
    assert response.url == attempt_url(attempt, f"check/#answer-{slugify(changed.question.id)}")
    html = client.get(attempt_url(attempt, "check/")).content.decode()
    assert f'id="answer-{slugify(changed.question.id)}"' in html


def test_a_second_click_on_send_does_not_submit_twice(client, attempt, upstream):
    answer_pages(client, attempt)
    client.post(attempt_url(attempt, "submit/"))
    response = client.post(attempt_url(attempt, "submit/"))
    assert response.url == attempt_url(attempt, "results/")
    assert upstream.state.count(endpoint="submit-assessment") == 1


def test_a_sent_attempt_can_no_longer_be_changed(client, attempt):
    answer_pages(client, attempt)
    client.post(attempt_url(attempt, "submit/"))
    before = dict(attempt.answers.values_list("question_id", "answer_id"))
    first = question_pages(attempt)[0].questions[0]
    response = client.post(
        attempt_url(attempt, "page/1/"), {f"q{first.position}": first.question.answers[3].id}
    )
    assert response.url == attempt_url(attempt, "")
    assert dict(attempt.answers.values_list("question_id", "answer_id")) == before


def test_an_ambiguous_failure_keeps_the_answers_and_resending_does_not_submit_twice(
    client, attempt, upstream
):
    answer_pages(client, attempt)
    # The upstream takes the submission but the reply is lost.
    upstream.state.inject_failure("submit-assessment", status=502, after_processing=True)
    response = client.post(attempt_url(attempt, "submit/"))
    attempt.refresh_from_db()
    assert attempt.state == State.SUBMIT_PENDING
    page = client.get(response.url).content.decode()
    assert "Your answers are saved and will be sent" in page
    assert AttemptAnswer.objects.filter(attempt=attempt).count() == len(attempt.questions)

    client.post(attempt_url(attempt, "resend/"))
    attempt.refresh_from_db()
    assert attempt.state == State.COMPLETED
    assert upstream.state.count(endpoint="submit-assessment") == 1


def test_a_submission_that_never_arrived_is_sent_again(client, attempt, upstream):
    answer_pages(client, attempt)
    upstream.state.inject_failure("submit-assessment", status=503)
    client.post(attempt_url(attempt, "submit/"))
    client.post(attempt_url(attempt, "resend/"))
    attempt.refresh_from_db()
    assert attempt.state == State.COMPLETED
    assert upstream.state.count(endpoint="submit-assessment") == 2


def test_an_expired_session_is_refetched_keeping_every_answer(client, attempt, upstream, pupil):
    answer_pages(client, attempt, choice=1)
    upstream.state.expire_sessions(pupil.upstream_user_id)
    client.post(attempt_url(attempt, "submit/"))
    attempt.refresh_from_db()
    assert attempt.state == State.REJECTED
    page = client.get(attempt_url(attempt, "results/")).content.decode()
    assert "did not accept your answers" in page and "Unknown or expired session" in page

    response = client.post(attempt_url(attempt, "refresh/"))
    assert response.url == attempt_url(attempt, "")
    assert client.get(response.url).url == attempt_url(attempt, "check/")
    assert attempt.answers.count() == len(attempt.questions)
    client.post(attempt_url(attempt, "submit/"))
    attempt.refresh_from_db()
    assert attempt.state == State.COMPLETED


def test_starting_again_resumes_the_open_attempt_without_asking_upstream(client, attempt, upstream):
    client.post("/me/start/")
    assert AssessmentAttempt.objects.filter(learner=attempt.learner).count() == 1
    assert upstream.state.count(endpoint="next-assessment") == 1


def test_when_nothing_is_left_to_take_the_learner_is_told(client, pupil, upstream):
    for _ in range(3):
        attempt = attempt_start(learner=pupil)
        answer_pages(client, attempt)
        client.post(attempt_url(attempt, "submit/"))
    response = client.post("/me/start/", follow=True)
    assert "There is no assessment for you to take right now." in response.content.decode()
    assert pupil.attempts.filter(state=State.COMPLETED).count() == 3


def test_my_assessments_lists_past_results(client, attempt):
    answer_pages(client, attempt)
    client.post(attempt_url(attempt, "submit/"))
    html = client.get("/me/").content.decode()
    assert attempt_url(attempt, "results/") in html and "Results ready" in html
    # Reading the results comes first; nothing promises another assessment the upstream has not
    # offered (asking for one is still possible).
    results_url = attempt_url(attempt, "results/")
    assert f'<a class="button" href="{results_url}">Read your results</a>' in html
    assert "Start another assessment" not in html and "Check for another assessment" in html
