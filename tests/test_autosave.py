"""Progressive enhancement for learners: answers saved as they are chosen, a timeout warning."""

import re
import time

import pytest
from django.test import Client

from accounts.idle import LAST_ACTIVITY_SESSION_KEY
from assessments.models import AssessmentAttempt
from assessments.taking import PageQuestion, question_pages
from tests.browsing import browser_sign_in
from tests.journeys import LEARNER_PASSWORD, attempt_url, register_pupil

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


def first_question(attempt: AssessmentAttempt) -> PageQuestion:
    return question_pages(attempt)[0].questions[0]


def one_answer(attempt: AssessmentAttempt, choice: int = 1, page: int = 1) -> dict:
    first = first_question(attempt)
    return {"page": str(page), f"q{first.position}": first.question.answers[choice].id}


def saved(attempt: AssessmentAttempt) -> dict[str, str]:
    return dict(attempt.answers.values_list("question_id", "answer_id"))


# Saving one answer ------------------------------------------------------------------------------


@pytest.mark.backend  # an upsert (bulk_create update_conflicts)
def test_it_saves_one_answer_as_it_is_chosen(client, attempt):
    response = client.post(attempt_url(attempt, "answers/"), one_answer(attempt, choice=2))
    assert response.status_code == 200
    assert response.json()["saved"] is True
    question = first_question(attempt).question
    assert saved(attempt) == {question.id: question.answers[2].id}
    attempt.refresh_from_db()
    assert attempt.state == State.IN_PROGRESS


@pytest.mark.backend  # an upsert (bulk_create update_conflicts)
def test_a_later_choice_replaces_the_earlier_one(client, attempt):
    client.post(attempt_url(attempt, "answers/"), one_answer(attempt, choice=0))
    client.post(attempt_url(attempt, "answers/"), one_answer(attempt, choice=3))
    question = first_question(attempt).question
    assert saved(attempt) == {question.id: question.answers[3].id}


def test_it_refuses_an_answer_that_is_not_the_questions(client, attempt):
    first = first_question(attempt)
    foreign = question_pages(attempt)[1].questions[0].question.answers[0].id
    response = client.post(
        attempt_url(attempt, "answers/"), {"page": "1", f"q{first.position}": foreign}
    )
    assert response.status_code == 400
    assert response.json() == {"saved": False, "message": "Choose one of the answers shown."}
    assert not attempt.answers.exists()


def test_it_refuses_a_question_from_another_page_or_a_page_that_does_not_exist(client, attempt):
    assert (
        client.post(attempt_url(attempt, "answers/"), one_answer(attempt, page=2)).status_code
        == 400
    )
    for page in ("0", "99", "x", "", "¹"):
        response = client.post(
            attempt_url(attempt, "answers/"), one_answer(attempt) | {"page": page}
        )
        assert response.status_code == 400, page
    assert not attempt.answers.exists()


def test_it_refuses_to_save_to_another_learners_attempt(attempt, other_learner):
    outsider = Client()
    outsider.force_login(other_learner.user)
    response = outsider.post(attempt_url(attempt, "answers/"), one_answer(attempt))
    assert response.status_code == 404
    assert not attempt.answers.exists()


def test_it_refuses_to_change_answers_already_sent(client, attempt):
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(state=State.SUBMITTED)
    response = client.post(attempt_url(attempt, "answers/"), one_answer(attempt))
    assert response.status_code == 409
    assert "already been sent" in response.json()["message"]
    assert not attempt.answers.exists()


def test_saving_needs_a_post(client, attempt):
    assert client.get(attempt_url(attempt, "answers/")).status_code == 405


def test_staff_and_anonymous_visitors_cannot_save(attempt, staff):
    anonymous = Client()
    response = anonymous.post(attempt_url(attempt, "answers/"), one_answer(attempt))
    assert response.status_code == 302 and response.url.startswith("/accounts/login/")
    staff_member = Client()
    staff_member.force_login(staff)
    assert (
        staff_member.post(attempt_url(attempt, "answers/"), one_answer(attempt)).status_code == 404
    )
    assert not attempt.answers.exists()


def test_saving_is_csrf_protected_and_takes_the_token_from_the_page(attempt, pupil):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(pupil.user)
    html = browser.get(attempt_url(attempt, "page/1/")).content.decode()
    assert browser.post(attempt_url(attempt, "answers/"), one_answer(attempt)).status_code == 403
    assert not attempt.answers.exists()

    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    response = browser.post(
        attempt_url(attempt, "answers/"), one_answer(attempt), HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 200
    assert attempt.answers.count() == 1


def test_the_question_page_loads_the_script_and_keeps_working_without_it(client, attempt):
    html = client.get(attempt_url(attempt, "page/1/")).content.decode()
    assert '<script src="/static/js/autosave.js" defer></script>' in html
    assert f'data-autosave-url="{attempt_url(attempt, "answers/")}" data-page="1"' in html
    assert 'id="autosave-status" aria-live="polite"' in html
    assert "<script>" not in html and " style=" not in html
    # The plain form still saves a page of answers.
    response = client.post(
        attempt_url(attempt, "page/1/"), {**one_answer(attempt), "save_and_exit": ""}
    )
    assert response.url == "/me/"
    assert attempt.answers.count() == 1


# Session timeout warning ------------------------------------------------------------------------


def test_learner_pages_carry_the_timeout_warning_with_the_time_left(client, attempt, settings):
    for tail in ("page/1/", "check/"):
        html = client.get(attempt_url(attempt, tail)).content.decode()
        assert '<script src="/static/js/session_timeout.js" defer></script>' in html
        meta = re.search(r'<meta name="learner-session"[^>]*>', html).group(0)
        # The first page records the activity; the second may come a clock second later,
        # when a full timeout less that second is what the server will really allow.
        seconds_left = int(re.search(r'data-seconds-left="(\d+)"', meta).group(1))
        assert settings.LEARNER_IDLE_TIMEOUT - 2 <= seconds_left <= settings.LEARNER_IDLE_TIMEOUT
        assert 'data-keep-alive-url="/me/session/"' in meta
        assert 'data-sign-in-url="/accounts/login/?next=%2Fme%2F' in meta
    assert "session_timeout.js" in client.get("/me/").content.decode()


def test_the_time_left_counts_from_the_last_recorded_activity(client, pupil, settings):
    session = client.session
    session[LAST_ACTIVITY_SESSION_KEY] = int(time.time()) - 30  # recent: not recorded again
    session.save()
    html = client.get("/me/").content.decode()
    seconds_left = int(re.search(r'data-seconds-left="(\d+)"', html).group(1))
    assert settings.LEARNER_IDLE_TIMEOUT - 32 <= seconds_left <= settings.LEARNER_IDLE_TIMEOUT - 30


def test_staff_pages_have_no_timeout_warning(staff_client):
    response = staff_client.get("/learners/")

    assert response.status_code == 200
    assert "<h1>Learners</h1>" in response.content.decode()  # the page itself, not an error
    assert "session_timeout.js" not in response.content.decode()


def test_staying_signed_in_records_activity_past_the_throttle(client, pupil, settings):
    session = client.session
    session[LAST_ACTIVITY_SESSION_KEY] = int(time.time()) - 30
    session.save()
    response = client.post("/me/session/")
    assert response.status_code == 200
    assert response.json() == {"seconds_left": settings.LEARNER_IDLE_TIMEOUT}
    assert client.session[LAST_ACTIVITY_SESSION_KEY] >= int(time.time()) - 1


def test_staying_signed_in_is_for_learners_only_by_post_with_csrf(pupil, staff):
    anonymous = Client()
    assert anonymous.post("/me/session/").url.startswith("/accounts/login/")
    staff_member = Client()
    staff_member.force_login(staff)
    assert staff_member.post("/me/session/").status_code == 404
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(pupil.user)
    assert browser.get("/me/session/").status_code == 405
    assert browser.post("/me/session/").status_code == 403


# In a real browser ------------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_clicked_answer_is_saved_without_pressing_a_button(browser, live_server, upstream, staff):
    pupil = register_pupil(staff)
    refused = []
    chromium = browser
    page = chromium.new_page()
    page.on(
        "console",
        lambda message: refused.append(message.text) if "Refused" in message.text else None,
    )
    browser_sign_in(page, live_server.url, pupil.username, LEARNER_PASSWORD)
    page.goto(live_server.url + "/me/")
    page.click("main form button[type=submit]")  # start the assessment
    page.wait_for_selector("#autosave-status")
    attempt = AssessmentAttempt.objects.get(learner=pupil)
    first = first_question(attempt)
    page.check(f"#id_q{first.position}_3")
    page.wait_for_selector("#autosave-status:has-text('Saved')", timeout=10000)
    assert saved(attempt) == {first.question.id: first.question.answers[2].id}
    # The learner sees it where they are looking: beside the question, on screen.
    mark = page.locator(f"#id_q{first.position} .question-saved")
    assert mark.inner_text() == "Saved"
    assert mark.is_visible()
    box, viewport = mark.bounding_box(), page.viewport_size
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"]
    said = [text for text in page.locator(".question-saved").all_inner_texts() if text.strip()]
    assert said == ["Saved"]  # only the question just answered says so

    page.reload()
    assert page.is_checked(f"#id_q{first.position}_3")
    assert refused == []


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_timeout_warning_keeps_a_learner_signed_in_or_signs_them_out(
    browser, live_server, learner, settings
):

    settings.LEARNER_IDLE_TIMEOUT = 123  # the warning comes 2 minutes before: after 3 s
    chromium = browser
    page = chromium.new_page()
    browser_sign_in(page, live_server.url, learner.username)
    page.goto(live_server.url + "/me/")
    dialog = page.get_by_role("alertdialog", name="You will be signed out soon")
    dialog.wait_for(timeout=10000)
    assert page.evaluate("document.activeElement.textContent") == "Stay signed in"
    with page.expect_response("**/me/session/") as keep_alive:
        page.keyboard.press("Enter")
    assert keep_alive.value.json() == {"seconds_left": 123}
    assert not dialog.is_visible()

    settings.LEARNER_IDLE_TIMEOUT = 3  # signed in still; the script leaves after 3 s
    page.goto(live_server.url + "/me/")
    assert page.url == live_server.url + "/me/"
    page.wait_for_url("**/accounts/login/?next=%2Fme%2F", timeout=10000)
    assert "You were signed out after" in page.inner_text("main")
