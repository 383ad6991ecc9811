"""One learner's whole journey against the sandbox upstream over real HTTP."""

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape

from assessments.child_words import focus_area_words
from assessments.models import AssessmentAttempt, AttemptAnswer
from kit.numbers import number_text
from learners.models import Learner, Level

# A radio carries its answer's words for the read-aloud script (data-speak) before its name.
RADIO = re.compile(
    r'<input type="radio"(?: data-speak="[^"]*")? name="(q\d+)" id="[^"]+" value="([^"]+)"'
)
LEARNER_PASSWORD = "Tidy-Desk-Mornings-42"


def radio_choices(html: str) -> dict[str, list[str]]:
    """Return each radio group's answer values, in page order."""
    groups: dict[str, list[str]] = {}
    for name, value in RADIO.findall(html):
        groups.setdefault(name, []).append(value)
    return groups


def calls(upstream) -> dict[str, int]:
    endpoints = [
        "create-learner",
        "next-assessment",
        "view-assessment",
        "submit-assessment",
        "results",
    ]
    return {endpoint: upstream.state.count(endpoint=endpoint) for endpoint in endpoints}


@pytest.mark.django_db
def test_a_learner_goes_from_registration_to_results_in_five_upstream_calls(
    client, staff, upstream
):
    client.force_login(staff)
    response = client.post(
        "/learners/new/",
        {
            "username": "maya.reader",
            "password": LEARNER_PASSWORD,
            "dob": "2008-09-14",
            "email": "maya@example.org",
            "first_name": "Maya",
            "last_name": "Reader",
            "level": "LOA_PARTNER_LEVEL2",
        },
    )
    learner = Learner.objects.get(username="maya.reader")
    assert response.status_code == 302
    assert response["Location"] == f"/learners/{learner.pk}/"
    assert learner.is_registered and learner.upstream_user_id
    assert learner.user.check_password(LEARNER_PASSWORD)
    client.post("/accounts/logout/")

    # The learner signs in with the username and password set at registration.
    response = client.post(
        "/accounts/login/", {"username": "maya.reader", "password": LEARNER_PASSWORD}
    )
    assert response.status_code == 302
    assert client.get("/").url == "/me/"
    assert b"Start my assessment" in client.get("/me/").content

    response = client.post("/me/start/")
    attempt = AssessmentAttempt.objects.get(learner=learner)
    assert response.url == f"/me/assessments/{attempt.assessment_id}/"
    assert attempt.state == AssessmentAttempt.State.IN_PROGRESS
    page_url = client.get(response.url).url
    assert page_url == f"/me/assessments/{attempt.assessment_id}/page/1/"

    # Every page, in order: answer each question with its second answer.
    step = 1
    chosen: dict[str, str] = {}
    while page_url.endswith(f"/page/{step}/"):
        page = client.get(page_url)
        html = page.content.decode()
        assert f"Step {step} of" in html
        groups = radio_choices(html)
        assert groups, "each question page shows radio answers"
        data = {name: values[1] for name, values in groups.items()}
        chosen.update(data)
        response = client.post(page_url, {**data, "continue": ""})
        assert response.status_code == 302
        page_url = response.url
        step += 1
    assert page_url == f"/me/assessments/{attempt.assessment_id}/check/"
    assert AttemptAnswer.objects.filter(attempt=attempt).count() == len(attempt.questions)
    assert len(chosen) == len(attempt.questions)

    check = client.get(page_url).content.decode()
    assert "Check your answers" in check
    assert check.count(">Change<") == len(attempt.questions)

    response = client.post(f"/me/assessments/{attempt.assessment_id}/submit/")
    assert response.url == f"/me/assessments/{attempt.assessment_id}/results/"
    attempt.refresh_from_db()
    assert attempt.state == AssessmentAttempt.State.COMPLETED
    result = attempt.result
    assert result.focus_areas.count() == 7
    assert "<li>" in result.trait_signs_html and "<ol>" in result.trait_tips_html

    # The learner reads the results in words: the score and risk level are for staff.
    results_page = client.get(response.url).content.decode()
    assert escape(result.trait_title) in results_page
    assert result.areas_needing_help
    for area in result.areas_needing_help:
        # In the portal's own words for their age, never the upstream's capitals.
        words = focus_area_words(area.name, primary=learner.level == Level.PRIMARY)
        assert f"<li>{escape(words)}</li>" in results_page
        assert escape(area.name) not in results_page
    assert "Risk level" not in results_page and "LOA score" not in results_page
    office = Client()
    office.force_login(staff)
    staff_page = office.get(f"/learners/{learner.pk}/attempts/{attempt.assessment_id}/")
    assert f"<dd>{result.risk_level}</dd>" in staff_page.content.decode()
    assert f'<dd class="score">{number_text(result.loa_score)}</dd>' in staff_page.content.decode()

    assert calls(upstream) == {
        "create-learner": 1,
        "next-assessment": 1,
        "view-assessment": 1,
        "submit-assessment": 1,
        "results": 1,
    }

    # Going back over everything is served from the local records.
    client.get(response.url)
    client.get("/me/")
    client.get(f"/me/assessments/{attempt.assessment_id}/")
    client.get(f"/me/assessments/{attempt.assessment_id}/page/1/")
    client.post("/accounts/logout/")
    client.force_login(staff)
    detail = client.get(f"/learners/{learner.pk}/").content.decode()
    assert "Completed" in detail and result.risk_level in detail
    staff_results = client.get(f"/learners/{learner.pk}/attempts/{attempt.assessment_id}/")
    assert result.trait_title in staff_results.content.decode()
    client.get("/learners/?q=maya")
    assert sum(calls(upstream).values()) == 5


@pytest.mark.django_db
def test_a_learner_resumes_on_another_device_where_they_left_off(client, staff, upstream):
    client.force_login(staff)
    client.post(
        "/learners/new/",
        {"username": "ravi.returns", "password": LEARNER_PASSWORD, "dob": "2011-01-30"},
    )
    learner = Learner.objects.get(username="ravi.returns")
    client.post("/accounts/logout/")

    client.login(username="ravi.returns", password=LEARNER_PASSWORD)
    start = client.post("/me/start/")
    first_page = client.get(start.url).url
    groups = radio_choices(client.get(first_page).content.decode())
    client.post(
        first_page, {**{name: values[0] for name, values in groups.items()}, "save_and_exit": ""}
    )
    client.post("/accounts/logout/")

    # A new browser: no cookies, a fresh sign-in.
    other_device = type(client)()
    other_device.login(username="ravi.returns", password=LEARNER_PASSWORD)
    resume = other_device.get(start.url)
    assert resume.url.endswith("/page/2/")
    page_one = other_device.get(first_page).content.decode()
    assert page_one.count(" checked>") == len(groups)
    assert User.objects.get(username="ravi.returns").learner == learner
    assert calls(upstream)["view-assessment"] == 1
