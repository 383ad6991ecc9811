"""Tests for the partner API client, with the upstream mocked by `responses`."""

import ast
import importlib
import json
import logging
import pkgutil
import traceback
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
import requests
import responses
from responses import matchers

from partner_api import (
    Answer,
    AssessmentContent,
    AssessmentResults,
    CreatedLearner,
    FocusArea,
    NextAssessment,
    PartnerApiBadResponse,
    PartnerApiClient,
    PartnerApiError,
    PartnerApiRejected,
    PartnerApiServerError,
    PartnerApiUnavailable,
    Response,
    SubmitReceipt,
    get_client,
)
from partner_api.resilience import reset_circuit_breakers
from tests.partner_api_support import (
    API_KEY,
    BASE,
    CREATE_URL,
    LEARNER_ID,
    NEXT_URL,
    PASSWORD,
    RESULTS_URL,
    SUBMIT_URL,
    VIEW_URL,
    connection_refused,
    connection_reset,
    payload,
)
from tests.source_imports import (
    ROOT,
    imported_modules,
    modules_in_or_under_a_circle,
    project_sources,
)

pytestmark = pytest.mark.usefixtures("without_failure_recording")


@pytest.fixture(autouse=True)
def closed_circuits() -> Any:
    """Start and end every test with no failures held against any upstream."""
    reset_circuit_breakers()
    yield
    reset_circuit_breakers()


@pytest.fixture
def client() -> PartnerApiClient:
    """Return a client for the mocked upstream that never retries (see the resilience tests)."""
    return PartnerApiClient(BASE, API_KEY, timeout=(3.05, 10), max_attempts=1)


@pytest.fixture
def upstream() -> Any:
    """Mock the upstream; every registered reply must be used."""
    with responses.RequestsMock() as mock:
        yield mock


def create(client: PartnerApiClient, **overrides: Any) -> CreatedLearner:
    """Create the test learner, with its password."""
    fields: dict[str, Any] = {"username": "ada.l", "password": PASSWORD, "dob": date(2008, 3, 9)}
    fields.update(overrides)
    return client.create_learner(**fields)


def content_with(mutate: Any) -> dict[str, Any]:
    """Return the recorded assessment content after a change made by `mutate`."""
    data = payload("view_assessment.json")
    mutate(data)
    return data


# Configuration --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "configured",
    [
        "https://partner.example",
        "https://partner.example/",
        "https://partner.example/plapi/v1/partners",
        "https://partner.example/plapi/v1/partners/",
    ],
)
def test_it_accepts_the_base_url_with_or_without_the_api_prefix(configured: str) -> None:
    assert PartnerApiClient(configured, API_KEY).base_url == BASE


@pytest.mark.parametrize("configured", ["partner.example", "ftp://partner.example", ""])
def test_it_refuses_a_base_url_that_is_not_http(configured: str) -> None:
    with pytest.raises(ValueError):
        PartnerApiClient(configured, API_KEY)


def test_it_refuses_an_empty_api_key() -> None:
    with pytest.raises(ValueError):
        PartnerApiClient(BASE, "")


def test_its_repr_does_not_show_the_api_key(client: PartnerApiClient) -> None:
    assert API_KEY not in repr(client)
    assert BASE in repr(client)


def test_get_client_builds_the_client_from_settings(settings: Any) -> None:
    settings.PARTNER_API_BASE_URL = "http://127.0.0.1:8001/"
    settings.PARTNER_API_KEY = API_KEY
    settings.PARTNER_API_TIMEOUT = (2.0, 7.5)

    client = get_client()

    assert client.base_url == "http://127.0.0.1:8001/plapi/v1/partners"
    assert client.timeout == (2.0, 7.5)


def test_get_client_reuses_the_client_until_settings_change(settings: Any) -> None:
    settings.PARTNER_API_BASE_URL = BASE
    settings.PARTNER_API_KEY = API_KEY
    settings.PARTNER_API_TIMEOUT = (3.05, 10.0)
    first = get_client()

    assert get_client() is first

    settings.PARTNER_API_KEY = "another-key"
    second = get_client()
    assert second is not first
    settings.PARTNER_API_TIMEOUT = (1.0, 2.0)
    assert get_client() is not second


def test_it_sends_every_request_with_the_timeout(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.get(NEXT_URL, json=payload("next_assessment.json"))

    client.next_assessment(LEARNER_ID)

    assert upstream.calls[0].request.req_kwargs["timeout"] == (3.05, 10.0)


def test_it_does_not_carry_cookies_from_one_learner_to_another(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.get(
        NEXT_URL,
        json=payload("next_assessment.json"),
        headers={"Set-Cookie": "upstream_session=abc123; Path=/"},
    )
    upstream.get(NEXT_URL, json=payload("next_assessment.json"))

    client.next_assessment(LEARNER_ID)
    client.next_assessment("another-learner")

    second = upstream.calls[1].request
    assert second.headers["learnerid"] == "another-learner"  # the second learner's call
    assert "Cookie" not in second.headers


def test_it_goes_through_the_proxy_the_environment_names_read_once(
    upstream: responses.RequestsMock, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.school.example:3128")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(tmp_path / "school-ca.pem"))
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    client = PartnerApiClient(BASE, API_KEY, timeout=(3.05, 10), max_attempts=1)
    upstream.get(NEXT_URL, json=payload("next_assessment.json"))
    upstream.get(NEXT_URL, json=payload("next_assessment.json"))

    client.next_assessment(LEARNER_ID)
    monkeypatch.setenv("HTTPS_PROXY", "http://changed.example:3128")  # read once: not seen
    client.next_assessment(LEARNER_ID)

    for call in upstream.calls:
        assert call.request.req_kwargs["proxies"]["https"] == "http://proxy.school.example:3128"
        assert call.request.req_kwargs["verify"] == str(tmp_path / "school-ca.pem")


# create-learner -------------------------------------------------------------------------------


def test_it_creates_a_learner_and_returns_its_user_id(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.post(CREATE_URL, json=payload("create_learner.json"), status=201)

    learner = create(client)

    assert learner == CreatedLearner(user_id=LEARNER_ID, message="Learner created successfully")


def test_it_sends_the_learner_as_json_with_an_iso_dob_and_the_level_in_the_query(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.post(
        CREATE_URL,
        json=payload("create_learner.json"),
        match=[
            matchers.query_param_matcher({"level": "LOA_PARTNER_LEVEL2"}),
            matchers.json_params_matcher(
                {
                    "username": "ada.l",
                    "password": PASSWORD,
                    "dob": "2008-03-09",
                    "email": "ada@example.org",
                    "first_name": "Ada",
                    "last_name": "Lovelace",
                }
            ),
        ],
    )

    create(
        client,
        email="ada@example.org",
        first_name="Ada",
        last_name="Lovelace",
        level="LOA_PARTNER_LEVEL2",
    )

    sent = upstream.calls[0].request
    assert sent.headers["Content-Type"] == "application/json"
    assert sent.headers["Accept"] == "application/json"


def test_it_omits_empty_optional_learner_fields_and_the_level(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.post(CREATE_URL, json=payload("create_learner.json"))

    create(client, email="", first_name=None)

    sent = upstream.calls[0].request
    assert json.loads(sent.body) == {"username": "ada.l", "password": PASSWORD, "dob": "2008-03-09"}
    assert "?" not in sent.url


def test_it_sends_the_api_key_but_no_learnerid_when_creating(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.post(CREATE_URL, json=payload("create_learner.json"))

    create(client)

    headers = upstream.calls[0].request.headers
    assert headers["apikey"] == API_KEY
    assert "learnerid" not in headers


def test_it_coerces_an_integer_user_id_to_text(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.post(CREATE_URL, json={"user_id": 5521, "message": "ok", "created": True})

    assert create(client).user_id == "5521"


def test_it_rejects_a_creation_reply_without_a_user_id(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.post(CREATE_URL, json={"message": "Learner created"})

    with pytest.raises(PartnerApiBadResponse) as caught:
        create(client)

    assert str(caught.value) == (
        "create-learner: unexpected response from upstream (200): user_id missing"
    )


def test_it_refuses_a_datetime_as_dob(client: PartnerApiClient) -> None:
    with pytest.raises(TypeError):
        create(client, dob=datetime(2008, 3, 9, tzinfo=UTC))


# next-assessment ------------------------------------------------------------------------------


def test_it_reads_the_next_assessment(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.get(NEXT_URL, json=payload("next_assessment.json"))

    assert client.next_assessment(LEARNER_ID) == NextAssessment(
        status="available",
        assessment_id=412,
        target_group="Further education",
        assessment_version=3,
    )


def test_it_sends_the_api_key_and_the_learnerid_after_creation(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.get(
        NEXT_URL,
        json=payload("next_assessment.json"),
        match=[matchers.header_matcher({"apikey": API_KEY, "learnerid": LEARNER_ID})],
    )

    client.next_assessment(LEARNER_ID)


def test_it_reports_no_assessment_when_the_id_is_null(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.get(NEXT_URL, json=payload("next_assessment_none.json"))

    next_one = client.next_assessment(LEARNER_ID)

    assert next_one.assessment_id is None
    assert next_one.assessment_version is None
    assert next_one.status == "completed"


def test_it_tolerates_a_sparse_next_assessment_with_digit_strings(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.get(NEXT_URL, json={"assessment_id": "412", "assessment_version": "3"})

    assert client.next_assessment(LEARNER_ID) == NextAssessment(
        status="", assessment_id=412, target_group="", assessment_version=3
    )


def test_it_rejects_a_boolean_assessment_id(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.get(NEXT_URL, json={"status": "available", "assessment_id": True})

    with pytest.raises(PartnerApiBadResponse, match="assessment_id is not an integer"):
        client.next_assessment(LEARNER_ID)


def test_it_refuses_an_empty_learner_id_before_sending(client: PartnerApiClient) -> None:
    with pytest.raises(ValueError):
        client.next_assessment("")


# view-assessment ------------------------------------------------------------------------------


def test_it_reads_the_assessment_content(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.get(
        VIEW_URL,
        json=payload("view_assessment.json"),
        match=[matchers.header_matcher({"apikey": API_KEY, "learnerid": LEARNER_ID})],
    )

    content = client.view_assessment(LEARNER_ID, 412)

    assert isinstance(content, AssessmentContent)
    assert content.session == "20481977"
    assert content.info.title == "Learning Habits Check"
    assert content.info.level == "LOA_PARTNER_LEVEL1"
    assert content.info.preassess is False
    assert content.info.version == Decimal("1.1")
    assert content.info.id == 412
    first = content.questions[0]
    assert first.id == "q-sleep-1"
    assert first.text == "Do you sleep at least eight hours on school nights?"
    assert first.group == "SLEEP & TIREDNESS"
    assert first.display_order == 1
    assert first.created == datetime(2024, 9, 2, 8, 15, tzinfo=timezone(timedelta(hours=1)))
    assert first.answers[0] == Answer(
        id="a-1-1", question_id="q-sleep-1", display_order=1, copy="Yes", icon="thumbs-up"
    )


def test_it_sorts_questions_and_answers_by_display_order(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.get(VIEW_URL, json=payload("view_assessment.json"))

    content = client.view_assessment(LEARNER_ID, 412)

    assert [question.id for question in content.questions] == ["q-sleep-1", "q-sleep-2", "7301"]
    assert [answer.id for answer in content.questions[1].answers] == ["a-2-1", "a-2-2", "a-2-3"]
    assert [answer.id for answer in content.questions[2].answers] == ["99101", "99102"]


def test_it_keeps_the_upstream_order_of_questions_with_equal_display_order(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    def same_order(data: dict[str, Any]) -> None:
        for question in data["questions"]:
            question["DisplayOrder"] = 1

    upstream.get(VIEW_URL, json=content_with(same_order))

    content = client.view_assessment(LEARNER_ID, 412)

    assert [question.id for question in content.questions] == ["q-sleep-2", "7301", "q-sleep-1"]


def test_it_tolerates_harmless_differences_in_the_content(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.get(VIEW_URL, json=payload("view_assessment.json"))

    content = client.view_assessment(LEARNER_ID, 412)

    revise = content.questions[2]
    assert revise.id == "7301"  # an integer id
    assert revise.updated is None  # an unparseable timestamp
    assert revise.answers[1].question_id == "7301"  # QuestionId missing: the parent's id
    assert revise.answers[1].icon == ""  # Icon missing
    assert revise.answers[0].display_order == 1  # DisplayOrder as a digit string
    assert content.questions[1].answers[1].icon == ""  # Icon null
    assert content.questions[1].updated == datetime(2024, 10, 11, 14, 3, 27, tzinfo=UTC)


def test_it_keeps_an_integer_session_as_text_and_defaults_missing_info_fields(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    def sparse(data: dict[str, Any]) -> None:
        data["assessment_session"] = 20481977
        data["assessment_info"] = {"Title": "Check", "Version": "2", "id": "412"}

    upstream.get(VIEW_URL, json=content_with(sparse))

    content = client.view_assessment(LEARNER_ID, 412)

    assert content.session == "20481977"
    assert content.info.level == ""
    assert content.info.preassess is False
    assert content.info.version == Decimal("2")
    assert content.info.id == 412


def test_it_names_the_path_of_a_missing_field_without_echoing_values(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    def drop_copy(data: dict[str, Any]) -> None:
        del data["questions"][2]["answers"][1]["AnswerCopy"]

    upstream.get(VIEW_URL, json=content_with(drop_copy), headers={"X-Request-Id": "req-77"})

    with pytest.raises(PartnerApiBadResponse) as caught:
        client.view_assessment(LEARNER_ID, 412)

    error = caught.value
    assert str(error) == (
        "view-assessment: unexpected response from upstream (200): "
        "questions[2].answers[1].AnswerCopy missing"
    )
    assert (error.endpoint, error.status, error.request_id) == ("view-assessment", 200, "req-77")


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        (lambda data: data["questions"][0].update(DisplayOrder=True), "DisplayOrder is not"),
        (lambda data: data["questions"][1].update(Question=42), "questions[1].Question is not"),
        (lambda data: data["assessment_info"].update(Version="NaN"), "Version is not a finite"),
        (lambda data: data["assessment_info"].update(Version=False), "Version is not a number"),
        (lambda data: data.update(questions=[]), "questions is empty"),
        (lambda data: data.update(questions={}), "questions is not an array"),
        (lambda data: data.pop("assessment_session"), "assessment_session missing"),
        (lambda data: data.pop("assessment_info"), "assessment_info missing"),
        (lambda data: data["questions"][2].update(id="q-sleep-2"), "questions[2].id is a dup"),
    ],
)
def test_it_rejects_content_with_a_wrong_shape(
    client: PartnerApiClient, upstream: responses.RequestsMock, mutate: Any, problem: str
) -> None:
    upstream.get(VIEW_URL, json=content_with(mutate))

    with pytest.raises(PartnerApiBadResponse) as caught:
        client.view_assessment(LEARNER_ID, 412)

    assert problem in str(caught.value)


def test_it_rejects_content_that_is_not_an_object(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.get(VIEW_URL, json=[payload("view_assessment.json")])

    with pytest.raises(PartnerApiBadResponse, match="body is not an object"):
        client.view_assessment(LEARNER_ID, 412)


def test_it_refuses_an_assessment_id_that_is_not_an_int(client: PartnerApiClient) -> None:
    with pytest.raises(TypeError):
        client.view_assessment(LEARNER_ID, "412/../../users")  # type: ignore[arg-type]


# submit-assessment ----------------------------------------------------------------------------


def test_it_submits_one_item_per_question_with_an_integer_session(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.post(
        SUBMIT_URL,
        json={"status": "submitted"},
        match=[
            matchers.header_matcher({"apikey": API_KEY, "learnerid": LEARNER_ID}),
            matchers.json_params_matcher(
                {
                    "responses": [
                        {"question_id": "q-sleep-1", "answer_id": "a-1-2"},
                        {"question_id": "7301", "answer_id": "99101"},
                    ],
                    "session": 20481977,
                }
            ),
        ],
    )

    receipt = client.submit_assessment(
        LEARNER_ID,
        "20481977",
        [Response(question_id="q-sleep-1", answer_id="a-1-2"), Response("7301", "99101")],
    )

    assert receipt == SubmitReceipt(status_code=200, body={"status": "submitted"})
    assert isinstance(json.loads(upstream.calls[0].request.body)["session"], int)


def test_it_sends_a_session_that_is_not_all_digits_as_text(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.post(SUBMIT_URL, status=204)

    receipt = client.submit_assessment(LEARNER_ID, "sess-9f2", [Response("q-sleep-1", "a-1-1")])

    assert json.loads(upstream.calls[0].request.body)["session"] == "sess-9f2"
    assert receipt == SubmitReceipt(status_code=204, body=None)


def test_it_keeps_a_plain_text_submission_reply(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.post(SUBMIT_URL, body="Assessment submitted", status=201)

    receipt = client.submit_assessment(LEARNER_ID, "1", [Response("q-sleep-1", "a-1-1")])

    assert receipt == SubmitReceipt(status_code=201, body="Assessment submitted")


def test_it_refuses_to_submit_two_responses_to_one_question(client: PartnerApiClient) -> None:
    twice = [Response("q-sleep-1", "a-1-1"), Response("q-sleep-1", "a-1-2")]

    with pytest.raises(ValueError):
        client.submit_assessment(LEARNER_ID, "1", twice)


def test_it_reports_a_refused_submission_with_the_upstream_message(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.post(SUBMIT_URL, status=422, json={"error": "Session expired"})

    with pytest.raises(PartnerApiRejected) as caught:
        client.submit_assessment(LEARNER_ID, "1", [Response("q-sleep-1", "a-1-1")])

    assert str(caught.value) == (
        "submit-assessment: upstream refused the request (422): Session expired"
    )


# results --------------------------------------------------------------------------------------


def test_it_reads_the_results(client: PartnerApiClient, upstream: responses.RequestsMock) -> None:
    upstream.get(
        RESULTS_URL,
        json=payload("results.json"),
        match=[matchers.header_matcher({"apikey": API_KEY, "learnerid": LEARNER_ID})],
    )

    results = client.results(LEARNER_ID, 412)

    assert results == AssessmentResults(
        loa_score=Decimal("72.35"),
        risk_level="Moderate",
        trait_title="The Night Owl",
        trait_copy="You do your best thinking late, but your lessons start early.",
        trait_signs_html=(
            "<ul><li>Finds it hard to start revising</li><li>Feels tired in the morning</li></ul>"
        ),
        trait_tips_html=(
            "<p>Try these steps this week:</p>"
            "<ol><li>Keep a regular bedtime</li><li>Revise in 25-minute blocks</li></ol>"
        ),
        result_description_html=(
            "<p>Your answers suggest that <strong>sleep</strong> is affecting your learning.</p>"
        ),
        focus_areas=[
            FocusArea(name="SLEEP & TIREDNESS", needs_help="yes", questions_count=2),
            FocusArea(name="RETAINING & RECALLING INFORMATION", needs_help="no", questions_count=1),
            FocusArea(name="EXAM ANXIETY", needs_help="no", questions_count=0),
        ],
    )


def test_it_reads_a_score_sent_as_text_and_null_html_as_empty(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    data = payload("results.json")
    data.update(LOAScore="64", TraitSigns=None, ResultDescription=None)
    upstream.get(RESULTS_URL, json=data)

    results = client.results(LEARNER_ID, 412)

    assert results.loa_score == Decimal("64")
    assert (results.trait_signs_html, results.result_description_html) == ("", "")


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"LOAScore": None}, "LOAScore missing"),
        ({"LOAScore": "Infinity"}, "LOAScore is not a finite number"),
        ({"RiskLevel": 3}, "RiskLevel is not a string"),
        ({"focus_areas": [{"search_filter_name": "CONFIDENCE", "needs_help": "no"}]}, "focus_"),
    ],
)
def test_it_rejects_results_with_a_wrong_shape(
    client: PartnerApiClient, upstream: responses.RequestsMock, change: Any, problem: str
) -> None:
    data = payload("results.json")
    data.update(change)
    upstream.get(RESULTS_URL, json=data)

    with pytest.raises(PartnerApiBadResponse) as caught:
        client.results(LEARNER_ID, 412)

    assert problem in str(caught.value)


def test_it_names_a_missing_focus_area_count(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    data = payload("results.json")
    del data["focus_areas"][1]["questions_count"]
    upstream.get(RESULTS_URL, json=data)

    with pytest.raises(PartnerApiBadResponse, match=r"focus_areas\[1\]\.questions_count missing"):
        client.results(LEARNER_ID, 412)


def test_it_rejects_results_that_are_not_an_object(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.get(RESULTS_URL, json="pending")

    with pytest.raises(PartnerApiBadResponse, match="body is not an object"):
        client.results(LEARNER_ID, 412)


# Transport failures ---------------------------------------------------------------------------


def test_it_reports_a_refused_connection_as_unavailable_before_sending(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.post(CREATE_URL, body=connection_refused())

    with pytest.raises(PartnerApiUnavailable) as caught:
        create(client)

    error = caught.value
    assert str(error) == "create-learner: could not connect"
    assert error.reached_upstream is False
    assert (error.endpoint, error.status, error.request_id) == ("create-learner", None, None)


def test_it_reports_an_unexplained_connection_error_as_possibly_sent(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.post(SUBMIT_URL, body=requests.ConnectionError("Connection refused by Responses"))

    with pytest.raises(PartnerApiUnavailable) as caught:
        client.submit_assessment(LEARNER_ID, "1", [Response("q-sleep-1", "a-1-1")])

    assert str(caught.value) == "submit-assessment: connection failed"
    assert caught.value.reached_upstream is True


def test_it_reports_a_dropped_connection_as_possibly_sent(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.post(SUBMIT_URL, body=connection_reset())

    with pytest.raises(PartnerApiUnavailable) as caught:
        client.submit_assessment(LEARNER_ID, "1", [Response("q-sleep-1", "a-1-1")])

    assert str(caught.value) == "submit-assessment: connection dropped"
    assert caught.value.reached_upstream is True


@pytest.mark.parametrize(
    ("exception", "message", "reached"),
    [
        (requests.ConnectTimeout(), "next-assessment: timed out connecting", False),
        (requests.ReadTimeout(), "next-assessment: timed out waiting for a response", True),
    ],
)
def test_it_reports_a_timeout_as_unavailable(
    client: PartnerApiClient,
    upstream: responses.RequestsMock,
    exception: Exception,
    message: str,
    reached: bool,
) -> None:
    upstream.get(NEXT_URL, body=exception)

    with pytest.raises(PartnerApiUnavailable) as caught:
        client.next_assessment(LEARNER_ID)

    assert str(caught.value) == message
    assert caught.value.reached_upstream is reached


# HTTP failures --------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 502, 503, 504])
def test_it_reports_busy_or_gateway_statuses_as_unavailable(
    client: PartnerApiClient, upstream: responses.RequestsMock, status: int
) -> None:
    upstream.get(
        RESULTS_URL,
        status=status,
        json={"message": "Try again later"},
        headers={"Retry-After": "30", "X-Request-Id": "req-1"},
    )

    with pytest.raises(PartnerApiUnavailable) as caught:
        client.results(LEARNER_ID, 412)

    error = caught.value
    assert (error.endpoint, error.status, error.request_id) == ("results", status, "req-1")
    assert error.retry_after == 30.0
    assert error.upstream_message == "Try again later"
    assert error.reached_upstream is True


def test_it_reads_a_retry_after_given_as_a_date(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    later = datetime.now(UTC) + timedelta(seconds=120)
    upstream.get(NEXT_URL, status=503, headers={"Retry-After": format_datetime(later, True)})

    with pytest.raises(PartnerApiUnavailable) as caught:
        client.next_assessment(LEARNER_ID)

    assert 100 < caught.value.retry_after <= 120
    assert str(caught.value) == "next-assessment: upstream unavailable (503)"


def test_it_leaves_retry_after_empty_when_absent_or_garbled(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.get(NEXT_URL, status=429)
    upstream.get(NEXT_URL, status=429, headers={"Retry-After": "soon"})

    for _ in range(2):
        with pytest.raises(PartnerApiUnavailable) as caught:
            client.next_assessment(LEARNER_ID)
        assert caught.value.retry_after is None


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (400, {"error": "dob is not a valid date"}, "dob is not a valid date"),
        (401, {"message": "Invalid API key"}, "Invalid API key"),
        (404, {"detail": "Learner not found"}, "Learner not found"),
        (409, {"error": "Username already taken", "code": 17}, "Username already taken"),
        (
            422,
            {"detail": [{"loc": ["body", "dob"], "msg": "invalid date", "input": "09/03/2008"}]},
            "body.dob: invalid date",
        ),
        (400, {"detail": {"username": ["This field is required."]}}, "username: This field is"),
        (403, "Forbidden", None),
        (404, None, None),
    ],
)
def test_it_reports_other_client_errors_as_rejected_with_the_upstream_message(
    client: PartnerApiClient,
    upstream: responses.RequestsMock,
    status: int,
    body: Any,
    message: str | None,
) -> None:
    upstream.post(
        CREATE_URL,
        status=status,
        body=json.dumps(body) if body is not None else "",
        headers={"X-Correlation-Id": "corr-5"},
    )

    with pytest.raises(PartnerApiRejected) as caught:
        create(client)

    error = caught.value
    assert (error.endpoint, error.status, error.request_id) == ("create-learner", status, "corr-5")
    if message is None:
        assert error.upstream_message is None
    else:
        assert error.upstream_message.startswith(message)


def test_it_reads_like_a_sentence(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.post(CREATE_URL, status=409, json={"error": "Username already taken"})

    with pytest.raises(PartnerApiRejected) as caught:
        create(client)

    assert str(caught.value) == (
        "create-learner: upstream refused the request (409): Username already taken"
    )


def test_it_shortens_a_long_upstream_message_to_one_line(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.get(NEXT_URL, status=400, json={"error": "Bad\nrequest " + "x" * 1000})

    with pytest.raises(PartnerApiRejected) as caught:
        client.next_assessment(LEARNER_ID)

    message = caught.value.upstream_message
    assert message.startswith("Bad request xxx")
    assert len(message) <= 300


@pytest.mark.parametrize("status", [500, 501, 599])
def test_it_reports_other_server_errors_as_server_errors(
    client: PartnerApiClient, upstream: responses.RequestsMock, status: int
) -> None:
    upstream.get(
        VIEW_URL, status=status, body="<h1>Internal error</h1>", headers={"Request-Id": "r-9"}
    )

    with pytest.raises(PartnerApiServerError) as caught:
        client.view_assessment(LEARNER_ID, 412)

    error = caught.value
    assert (error.endpoint, error.status, error.request_id) == ("view-assessment", status, "r-9")
    assert error.upstream_message is None
    assert str(error) == f"view-assessment: upstream server error ({status})"


def test_it_reports_a_success_that_is_not_json_as_a_bad_response(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.get(
        NEXT_URL,
        body="<html>Maintenance</html>",
        content_type="text/html",
        headers={"X-Request-Id": "req-3"},
    )

    with pytest.raises(PartnerApiBadResponse) as caught:
        client.next_assessment(LEARNER_ID)

    error = caught.value
    assert (error.endpoint, error.status, error.request_id) == ("next-assessment", 200, "req-3")
    assert (
        str(error) == "next-assessment: unexpected response from upstream (200): body is not JSON"
    )


def test_it_does_not_follow_a_redirect(
    client: PartnerApiClient, upstream: responses.RequestsMock
) -> None:
    upstream.get(
        NEXT_URL,
        status=302,
        headers={"Location": "https://elsewhere.example/steal", "X-Request-Id": "req-4"},
    )

    with pytest.raises(PartnerApiBadResponse) as caught:
        client.next_assessment(LEARNER_ID)

    error = caught.value
    assert (error.endpoint, error.status, error.request_id) == ("next-assessment", 302, "req-4")
    assert str(error) == "next-assessment: unexpected redirect (302)"
    assert len(upstream.calls) == 1


def test_every_error_is_a_partner_api_error() -> None:
    for error_class in (
        PartnerApiUnavailable,
        PartnerApiRejected,
        PartnerApiBadResponse,
        PartnerApiServerError,
    ):
        assert issubclass(error_class, PartnerApiError)


# Logging and secrets --------------------------------------------------------------------------


def test_it_logs_one_line_per_call(
    client: PartnerApiClient, upstream: responses.RequestsMock, caplog: pytest.LogCaptureFixture
) -> None:
    upstream.get(NEXT_URL, json=payload("next_assessment.json"), headers={"X-Request-Id": "r-1"})
    upstream.get(RESULTS_URL, body=requests.ReadTimeout())
    caplog.set_level(logging.INFO, logger="portal.partner_api")

    client.next_assessment(LEARNER_ID)
    with pytest.raises(PartnerApiUnavailable):
        client.results(LEARNER_ID, 412)

    lines = [r.getMessage() for r in caplog.records if r.name == "portal.partner_api"]
    assert len(lines) == 2
    assert lines[0].startswith("partner API next-assessment GET -> 200 in ")
    assert lines[0].endswith(" ms (attempt 1/1, request id r-1)")
    assert lines[1].startswith("partner API results GET -> timed out waiting for a response in ")
    assert lines[1].endswith(" ms (attempt 1/1, request id -); giving up: attempts used up")


def test_the_key_the_learnerid_and_the_password_never_leak(
    client: PartnerApiClient, upstream: responses.RequestsMock, caplog: pytest.LogCaptureFixture
) -> None:
    # The upstream echoes whatever it was sent; the password only ever goes to create-learner.
    echo = f"key {API_KEY} learner {LEARNER_ID}"
    upstream.post(CREATE_URL, json=payload("create_learner.json"))
    upstream.post(
        CREATE_URL, status=409, json={"error": f"Password {PASSWORD} is reused, key {API_KEY}"}
    )
    upstream.post(
        CREATE_URL,
        status=422,
        json={"detail": [{"loc": ["body", "password"], "msg": "weak", "input": PASSWORD}]},
    )
    upstream.post(CREATE_URL, body=connection_refused())
    upstream.get(NEXT_URL, status=404, json={"message": echo}, headers={"X-Request-Id": echo})
    upstream.get(NEXT_URL, body=requests.ReadTimeout())
    upstream.get(VIEW_URL, status=302, headers={"Location": f"https://x.example/?k={API_KEY}"})
    upstream.get(VIEW_URL, body=f"<p>{echo}</p>")
    upstream.post(SUBMIT_URL, status=503, json={"detail": {"learnerid": LEARNER_ID}})
    upstream.get(RESULTS_URL, status=500, json={"error": echo})
    upstream.get(RESULTS_URL, json={"LOAScore": API_KEY})
    caplog.set_level(logging.DEBUG)
    logging.getLogger("urllib3").setLevel(logging.DEBUG)

    calls = [
        lambda: create(client, level="LOA_PARTNER_LEVEL1"),
        lambda: create(client),
        lambda: create(client),
        lambda: create(client),
        lambda: client.next_assessment(LEARNER_ID),
        lambda: client.next_assessment(LEARNER_ID),
        lambda: client.view_assessment(LEARNER_ID, 412),
        lambda: client.view_assessment(LEARNER_ID, 412),
        lambda: client.submit_assessment(LEARNER_ID, "7", [Response("q-sleep-1", "a-1-1")]),
        lambda: client.results(LEARNER_ID, 412),
        lambda: client.results(LEARNER_ID, 412),
    ]
    seen = []
    failures = 0
    for call in calls:
        try:
            call()
        except PartnerApiError as error:
            failures += 1
            seen += [str(error), repr(error), *map(str, vars(error).values())]
            seen += traceback.format_exception(error)
    seen.append(caplog.text)
    seen += [str(record.args) for record in caplog.records]

    assert failures == 10
    assert len(caplog.records) >= len(calls)
    everything = "\n".join(seen)
    assert "[redacted]" in everything  # the echoes were there to leak
    for secret in (API_KEY, LEARNER_ID, PASSWORD):
        assert secret not in everything


# The package ----------------------------------------------------------------------------------


def test_only_the_transport_and_the_file_fetch_import_requests_or_urllib3() -> None:
    # The client's HTTP in one module, the portal's own file fetches (answer pictures) in one
    # other: each decides its timeouts, redirects and what reaches logs.
    importers = sorted(
        str(path.relative_to(ROOT))
        for path in project_sources()
        if any(name.split(".")[0] in ("requests", "urllib3") for name in imported_modules(path))
    )

    assert importers == ["partner_api/fetching.py", "partner_api/transport.py"]


def test_the_client_package_has_no_import_circle() -> None:
    package = ROOT / "partner_api"
    assert (package / "transport.py").exists()

    assert modules_in_or_under_a_circle(package) == []


# Every name `from portal import partner_api` offered before the client left portal/: checks and
# scripts import that address (../shared/DESIGN.md, section 3), so the list only ever grows.
OLD_ADDRESS_NAMES = [
    "Answer",
    "AssessmentContent",
    "AssessmentInfo",
    "AssessmentResults",
    "CreatedLearner",
    "FocusArea",
    "NextAssessment",
    "Question",
    "Response",
    "SubmitReceipt",
    "PartnerApiError",
    "PartnerApiUnavailable",
    "PartnerApiCircuitOpen",
    "PartnerApiRejected",
    "PartnerApiBadResponse",
    "PartnerApiServerError",
    "PartnerApiClient",
    "get_client",
    "upstream_status",
    "UpstreamStatus",
    "CLIENT_SETTINGS",
    "DEFAULT_TIMEOUT",
    "RetryPolicy",
    "RetryPlan",
    "MIN_ATTEMPT_SECONDS",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_RETRY_BUDGET",
    "DEFAULT_BACKOFF",
    "DEFAULT_BACKOFF_CAP",
    "DEFAULT_RETRY_AFTER_CAP",
    "CircuitBreaker",
    "BreakerSnapshot",
    "Permit",
    "Verdict",
    "breaker_for",
    "existing_breaker",
    "check_breaker_settings",
    "reset_circuit_breakers",
    "status_of",
    "DEFAULT_BREAKER_THRESHOLD",
    "DEFAULT_BREAKER_COOLDOWN",
    "CircuitStore",
    "circuit_store",
    "set_circuit_store",
    "CallRecord",
    "add_call_listener",
    "remove_call_listener",
    "notify_call_listeners",
    "add_circuit_listener",
    "remove_circuit_listener",
    "notify_circuit_listeners",
    "API_PREFIX",
    "API_KEY_HEADER",
    "LEARNER_ID_HEADER",
    "LEVEL_PARAM",
    "ENDPOINT_PATHS",
    "ERROR_MESSAGE_FIELDS",
    "REQUEST_ID_HEADERS",
    "ID_RANGE",
    "IDENTIFIER_LIMIT",
    "SMALL_INT_RANGE",
    "DECIMAL_LIMIT",
    "DECIMAL_PLACES",
    "ENDPOINT_RETRIES",
    "NOT_RETRIED",
    "RETRY_IF_UNAVAILABLE",
    "RETRY_IF_NOT_SENT",
    "RETRY_NEVER",
    "REDACTED",
    "UPSTREAM_MESSAGE_LIMIT",
    "SUBMIT_TEXT_BODY_LIMIT",
    "UNAVAILABLE_STATUSES",
    "USER_AGENT",
]

# The client contract of ../shared/DESIGN.md (section 3) and docs/partner-api.md: exported by the
# package whether or not an app imports it today.
CONTRACT_NAMES = [
    "PartnerApiClient",
    "get_client",
    "CreatedLearner",
    "NextAssessment",
    "AssessmentContent",
    "SubmitReceipt",
    "Response",
    "AssessmentResults",
    "Question",
    "Answer",
    "AssessmentInfo",
    "FocusArea",
    "PartnerApiError",
    "PartnerApiUnavailable",
    "PartnerApiCircuitOpen",
    "PartnerApiRejected",
    "PartnerApiBadResponse",
    "PartnerApiServerError",
]


def test_the_old_address_offers_every_name_it_did_as_the_clients_own_object() -> None:
    import partner_api
    from portal import partner_api as old_address

    assert len(set(OLD_ADDRESS_NAMES)) == len(OLD_ADDRESS_NAMES) == 73
    assert sorted(old_address.__all__) == sorted(OLD_ADDRESS_NAMES)
    assert set(OLD_ADDRESS_NAMES).issuperset(CONTRACT_NAMES)
    client_modules = [
        importlib.import_module(f"partner_api.{module.name}")
        for module in pkgutil.iter_modules(partner_api.__path__)
    ]
    for name in OLD_ADDRESS_NAMES:
        # Whichever of the client's modules holds the name, it holds this very object: the old
        # address re-exports, it never copies.
        held = [vars(module)[name] for module in client_modules if name in vars(module)]
        assert held, name
        assert all(value is getattr(old_address, name) for value in held), name
        if name in partner_api.__all__:
            assert getattr(partner_api, name) is getattr(old_address, name), name


def test_the_package_exports_what_the_apps_import_and_the_contract_no_more() -> None:
    import partner_api

    imported = set()
    for path in project_sources():
        relative = path.relative_to(ROOT)
        if relative.parts[0] == "partner_api" or relative == Path("portal", "partner_api.py"):
            continue  # the client itself, and the old address that re-exports it all
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "partner_api" and not node.level:
                imported.update(alias.name for alias in node.names)

    assert sorted(partner_api.__all__) == sorted(imported.union(CONTRACT_NAMES))
    assert all(hasattr(partner_api, name) for name in partner_api.__all__)
