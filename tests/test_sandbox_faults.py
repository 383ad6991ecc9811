"""Fault injection in the sandbox upstream, over real HTTP: every kind, the rules, the controls."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import requests
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from sandbox.bank import ASSESSMENT_VERSION
from sandbox.faults import FaultError, FaultSet, parse_fault_spec
from sandbox.server import DEMO_API_KEY, RunningSandbox, start_sandbox
from tests.sandbox_calls import CREATE, NEXT, create_learner, pick, view_next

SUBMIT = "/assessments/submit-assessment"
LEARNER = {"username": "amara", "password": "correct-horse", "dob": "2009-03-14"}


@pytest.fixture
def sandbox() -> Iterator[RunningSandbox]:
    with start_sandbox(seed=7) as running:
        yield running


def send(
    sandbox: RunningSandbox,
    method: str,
    path: str,
    *,
    learner: str | None = None,
    timeout: float | tuple[float, float] = 5,
    **kwargs: Any,
) -> requests.Response:
    """Send one API request with the apikey (and learnerid) headers."""
    headers = {"apikey": DEMO_API_KEY}
    if learner is not None:
        headers["learnerid"] = learner
    url = sandbox.base_url + path
    return requests.request(method, url, headers=headers, timeout=timeout, **kwargs)


def control(
    sandbox: RunningSandbox, method: str, suffix: str = "", *, key: str | None = DEMO_API_KEY, **kw
) -> requests.Response:
    """Call the fault control API of a sandbox."""
    headers = {} if key is None else {"apikey": key}
    url = f"http://{sandbox.host}:{sandbox.port}/_sandbox/faults{suffix}"
    return requests.request(method, url, headers=headers, timeout=5, **kw)


def ready_to_submit(sandbox: RunningSandbox) -> tuple[str, int, dict[str, Any]]:
    """Register a learner and view their first assessment: (learner, assessment id, body)."""
    learner = create_learner(sandbox)
    assessment_id, content = view_next(sandbox, learner)
    session = int(content["assessment_session"])
    return learner, assessment_id, {"session": session, "responses": pick(content)}


def statuses(sandbox: RunningSandbox, path: str, count: int, **kwargs: Any) -> list[int]:
    """Send the same request `count` times and return the statuses."""
    return [send(sandbox, "GET", path, **kwargs).status_code for _ in range(count)]


# The kinds of fault


def test_latency_delays_the_answer_and_then_answers_normally(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    sandbox.state.faults.add("next-assessment", "latency", ms=300)

    started = time.monotonic()
    response = send(sandbox, "GET", NEXT, learner=learner)

    assert time.monotonic() - started >= 0.3
    assert response.status_code == 200
    assert response.json()["status"] == "AVAILABLE"
    assert sandbox.state.requests[-1] == ("GET", "next-assessment", 200)


@pytest.mark.parametrize("kind", ["500", "502", "504"])
def test_an_error_kind_answers_its_status_without_doing_the_work(
    sandbox: RunningSandbox, kind: str
) -> None:
    learner = create_learner(sandbox)
    sandbox.state.faults.add("next-assessment", kind, times=1)

    response = send(sandbox, "GET", NEXT, learner=learner)

    assert response.status_code == int(kind)
    assert response.json() == {"error": "Injected failure"}
    assert "Retry-After" not in response.headers
    assert response.headers["X-Request-Id"].startswith("sbx-")
    assert sandbox.state.learners[learner].assessment_ids == []  # nothing was offered
    assert sandbox.state.requests[-1] == ("GET", "next-assessment", int(kind))


@pytest.mark.parametrize("kind", ["503", "429"])
def test_503_and_429_say_when_to_retry(sandbox: RunningSandbox, kind: str) -> None:
    sandbox.state.faults.add("create-learner", kind, times=1)
    sandbox.state.faults.add("create-learner", kind, times=1, retry_after=7)

    first = send(sandbox, "POST", CREATE, json=LEARNER)
    second = send(sandbox, "POST", CREATE, json=LEARNER)

    assert (first.status_code, first.headers["Retry-After"]) == (int(kind), "1")
    assert (second.status_code, second.headers["Retry-After"]) == (int(kind), "7")
    assert first.json() == {"error": "Injected failure"}
    assert sandbox.state.learners == {}


def test_retry_after_none_sends_no_header(sandbox: RunningSandbox) -> None:
    sandbox.state.faults.add_spec("create=503:retry_after=none")

    response = send(sandbox, "POST", CREATE, json=LEARNER)

    assert response.status_code == 503
    assert "Retry-After" not in response.headers


def test_the_error_kind_answers_any_status_asked_for(sandbox: RunningSandbox) -> None:
    sandbox.state.faults.add("create-learner", "error", status=418, retry_after=3)

    response = send(sandbox, "POST", CREATE, json=LEARNER)

    assert response.status_code == 418
    assert response.headers["Retry-After"] == "3"


def test_hang_outlasts_the_client_timeout(sandbox: RunningSandbox) -> None:
    sandbox.state.faults.add("create-learner", "hang", seconds=2, times=1)

    with pytest.raises(requests.exceptions.ReadTimeout):
        send(sandbox, "POST", CREATE, json=LEARNER, timeout=(2, 0.3))

    assert sandbox.state.requests == [("POST", "create-learner", 0)]
    assert sandbox.state.learners == {}


def test_hang_then_closes_the_connection_without_answering(sandbox: RunningSandbox) -> None:
    sandbox.state.faults.add("results", "hang", seconds=0.3)

    started = time.monotonic()
    with pytest.raises(requests.exceptions.ConnectionError):
        send(sandbox, "GET", "/assessments/results/1001", learner="x", timeout=(2, 3))

    assert 0.3 <= time.monotonic() - started < 2


def test_stopping_the_sandbox_does_not_wait_for_a_hanging_request() -> None:
    sandbox = start_sandbox(faults=["*=hang:seconds=60"])
    with pytest.raises(requests.exceptions.ReadTimeout):
        send(sandbox, "GET", NEXT, learner="x", timeout=(2, 0.2))

    started = time.monotonic()
    sandbox.stop()

    assert time.monotonic() - started < 1


def test_drop_closes_the_connection_without_any_response(sandbox: RunningSandbox) -> None:
    learner, assessment_id, body = ready_to_submit(sandbox)
    sandbox.state.faults.add("submit-assessment", "drop", times=1)

    with pytest.raises(requests.exceptions.ConnectionError):
        send(sandbox, "POST", SUBMIT, learner=learner, json=body)

    assert sandbox.state.requests[-1] == ("POST", "submit-assessment", 0)
    assert sandbox.state.submissions_count() == 0
    # The rule is spent: the same submission now goes through, once.
    assert send(sandbox, "POST", SUBMIT, learner=learner, json=body).status_code == 200
    assert sandbox.state.submissions_count(assessment_id) == 1


def test_non_json_answers_200_with_an_html_page_and_does_no_work(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    assessment_id = send(sandbox, "GET", NEXT, learner=learner).json()["assessment_id"]
    sandbox.state.faults.add("view-assessment", "non_json", times=1)

    response = send(
        sandbox, "GET", f"/assessments/view-assessment/{assessment_id}", learner=learner
    )

    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/html")
    assert response.text.startswith("<!DOCTYPE html>")
    with pytest.raises(ValueError):
        response.json()
    assert sandbox.state.sessions == {}  # no session was issued


def test_non_json_can_do_the_work_first(sandbox: RunningSandbox) -> None:
    sandbox.state.faults.add_spec("create=non_json:processed=true,times=1")

    response = send(sandbox, "POST", CREATE, json=LEARNER)

    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/html")
    assert [learner.username for learner in sandbox.state.learners.values()] == ["amara"]


def test_missing_field_leaves_out_the_user_id_of_a_created_learner(sandbox: RunningSandbox) -> None:
    sandbox.state.faults.add("create-learner", "missing_field")

    response = send(sandbox, "POST", CREATE, json=LEARNER)

    assert response.status_code == 201
    assert response.json() == {"message": "Learner created"}
    assert len(sandbox.state.learners) == 1  # created all the same


def test_missing_field_mangles_the_next_assessment(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    sandbox.state.faults.add("next-assessment", "missing_field")

    body = send(sandbox, "GET", NEXT, learner=learner).json()

    assert "status" not in body
    assert body["assessment_id"] == "junk"
    assert body["target_group"] and body["assessment_version"] == ASSESSMENT_VERSION


def test_missing_field_leaves_out_the_session_the_status_or_the_score(
    sandbox: RunningSandbox,
) -> None:
    learner = create_learner(sandbox)
    assessment_id = send(sandbox, "GET", NEXT, learner=learner).json()["assessment_id"]
    view = f"/assessments/view-assessment/{assessment_id}"
    for endpoint in ("view-assessment", "submit-assessment", "results"):
        sandbox.state.faults.add(endpoint, "missing_field", times=1)

    content = send(sandbox, "GET", view, learner=learner).json()
    assert "assessment_session" not in content
    assert content["questions"] and content["assessment_info"]["id"] == assessment_id
    # The session was issued all the same; the next view gives one, and it works.
    content = send(sandbox, "GET", view, learner=learner).json()
    body = {"session": content["assessment_session"], "responses": pick(content)}
    submitted = send(sandbox, "POST", SUBMIT, learner=learner, json=body)
    assert submitted.status_code == 200
    assert submitted.json() == {"message": "Assessment submitted", "assessment_id": assessment_id}
    assert sandbox.state.submissions_count(assessment_id) == 1
    scored = send(sandbox, "GET", f"/assessments/results/{assessment_id}", learner=learner).json()
    assert "LOAScore" not in scored and "RiskLevel" in scored


def test_missing_field_can_leave_out_a_chosen_field(sandbox: RunningSandbox) -> None:
    sandbox.state.faults.add_spec("create=missing_field:field=message")

    response = send(sandbox, "POST", CREATE, json=LEARNER)

    assert set(response.json()) == {"user_id"}


def test_processed_500_creates_the_learner_and_then_answers_500(sandbox: RunningSandbox) -> None:
    sandbox.state.faults.add("create-learner", "processed_500", times=1)

    response = send(sandbox, "POST", CREATE, json=LEARNER)

    assert response.status_code == 500
    assert response.json() == {"error": "Injected failure"}
    assert [learner.username for learner in sandbox.state.learners.values()] == ["amara"]
    # Sending it again shows the learner exists: the username is taken.
    assert send(sandbox, "POST", CREATE, json=LEARNER).status_code == 409


def test_processed_500_records_the_submission_and_then_answers_500(
    sandbox: RunningSandbox,
) -> None:
    learner, assessment_id, body = ready_to_submit(sandbox)
    sandbox.state.faults.add("submit-assessment", "processed_500", times=1)

    response = send(sandbox, "POST", SUBMIT, learner=learner, json=body)

    assert response.status_code == 500
    assert sandbox.state.submissions_count(assessment_id) == 1
    assert sandbox.state.requests[-1] == ("POST", "submit-assessment", 500)
    results = send(sandbox, "GET", f"/assessments/results/{assessment_id}", learner=learner)
    assert results.status_code == 200 and "LOAScore" in results.json()
    assert send(sandbox, "POST", SUBMIT, learner=learner, json=body).status_code == 409
    assert sandbox.state.submissions_count() == 1


def test_expired_session_refuses_and_forgets_the_learners_sessions(
    sandbox: RunningSandbox,
) -> None:
    learner, assessment_id, body = ready_to_submit(sandbox)
    sandbox.state.faults.add("submit-assessment", "expired_session", times=1)

    refused = send(sandbox, "POST", SUBMIT, learner=learner, json=body)

    assert refused.status_code == 400
    assert refused.json() == {"error": "Unknown or expired session"}
    assert sandbox.state.submissions_count() == 0
    # The session really is gone: sending it again, fault spent, is refused the same way.
    again = send(sandbox, "POST", SUBMIT, learner=learner, json=body)
    assert again.json() == {"error": "Unknown or expired session"}
    # A new view gives a session that works.
    _, content = view_next(sandbox, learner)
    fresh = {"session": content["assessment_session"], "responses": pick(content)}
    assert send(sandbox, "POST", SUBMIT, learner=learner, json=fresh).status_code == 200
    assert sandbox.state.submissions_count(assessment_id) == 1


def test_expired_session_forgets_only_that_learners_sessions(sandbox: RunningSandbox) -> None:
    learner, _, body = ready_to_submit(sandbox)
    other = create_learner(sandbox, "olive")
    view_next(sandbox, other)
    sandbox.state.faults.add("submit-assessment", "expired_session", times=1)

    send(sandbox, "POST", SUBMIT, learner=learner, json=body)

    assert [owner for owner, _ in sandbox.state.sessions.values()] == [other]


def test_faulted_requests_are_logged_with_the_status_sent(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    for spec in ("next=503:times=1", "next=drop:times=1", "next=non_json:times=1"):
        sandbox.state.faults.add_spec(spec)

    for _ in range(4):
        with contextlib.suppress(requests.exceptions.ConnectionError):
            send(sandbox, "GET", NEXT, learner=learner)

    assert [status for _, _, status in sandbox.state.requests] == [201, 503, 0, 200, 200]
    assert sandbox.state.faults.applied() == [
        ("next-assessment", "503"),
        ("next-assessment", "drop"),
        ("next-assessment", "non_json"),
    ]


def test_the_legacy_failures_still_work(sandbox: RunningSandbox) -> None:
    learner, assessment_id, body = ready_to_submit(sandbox)
    sandbox.state.inject_failure("submit-assessment", status=503)
    sandbox.state.inject_failure("submit-assessment", status=502, after_processing=True)

    first = send(sandbox, "POST", SUBMIT, learner=learner, json=body)
    second = send(sandbox, "POST", SUBMIT, learner=learner, json=body)

    assert first.status_code == 503 and "Retry-After" not in first.headers
    assert second.status_code == 502
    assert sandbox.state.submissions_count(assessment_id) == 1
    assert sandbox.state.faults.rules() == []
    with pytest.raises(ValueError):
        sandbox.state.inject_failure("nowhere")


# Which requests a rule hits


def test_times_applies_to_the_next_n_requests_then_the_rule_goes(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    sandbox.state.faults.add("next-assessment", "503", times=2)

    assert statuses(sandbox, NEXT, 3, learner=learner) == [503, 503, 200]
    assert sandbox.state.faults.rules() == []


def test_after_lets_the_first_requests_through(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    sandbox.state.faults.add_spec("next=500:after=2,times=1")

    assert statuses(sandbox, NEXT, 4, learner=learner) == [200, 200, 500, 200]


def test_a_rule_without_times_or_rate_applies_until_cleared(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    sandbox.state.faults.add("next-assessment", "502")

    assert statuses(sandbox, NEXT, 3, learner=learner) == [502, 502, 502]
    assert sandbox.state.faults.clear() == 1
    assert statuses(sandbox, NEXT, 1, learner=learner) == [200]


def test_the_first_matching_rule_wins(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    sandbox.state.faults.add("next-assessment", "503", times=1)
    sandbox.state.faults.add("*", "500")

    assert statuses(sandbox, NEXT, 2, learner=learner) == [503, 500]
    assert send(sandbox, "POST", CREATE, json=LEARNER).status_code == 500


def test_only_the_rules_endpoint_is_affected(sandbox: RunningSandbox) -> None:
    sandbox.state.faults.add("results", "503")

    learner = create_learner(sandbox)

    assert statuses(sandbox, NEXT, 1, learner=learner) == [200]


def hits(faults: FaultSet, endpoint: str, count: int) -> list[bool]:
    """Return, for `count` requests to an endpoint, whether each was faulted."""
    return [faults.take(endpoint) is not None for _ in range(count)]


def test_a_rate_is_deterministic_for_a_seed() -> None:
    runs = []
    for seed in (7, 7, 8):
        faults = FaultSet(seed)
        faults.add("view-assessment", "503", rate=0.5)
        runs.append(hits(faults, "view-assessment", 40))

    assert runs[0] == runs[1]
    assert runs[0] != runs[2]
    assert 5 < sum(runs[0]) < 35


def test_a_rate_ignores_the_traffic_to_other_endpoints() -> None:
    quiet, busy = FaultSet(7), FaultSet(7)
    for faults in (quiet, busy):
        faults.add("view-assessment", "503", rate=0.5)
        faults.add("results", "latency", rate=0.5, ms=0)

    alone = hits(quiet, "view-assessment", 20)
    mixed = []
    for _ in range(20):
        hits(busy, "results", 3)
        mixed.extend(hits(busy, "view-assessment", 1))

    assert alone == mixed


def test_reseeding_replays_a_rules_sequence() -> None:
    faults = FaultSet(1)
    faults.add("results", "500", rate=0.3)
    faults.reseed(7)
    first = hits(faults, "results", 20)
    faults.reseed(7)

    assert hits(faults, "results", 20) == first
    assert faults.seed == 7


def test_rate_with_times_stops_after_n_faults() -> None:
    faults = FaultSet(7)
    faults.add("results", "500", rate=0.5, times=3)

    assert sum(hits(faults, "results", 40)) == 3
    assert faults.rules() == []


def test_a_rate_gives_the_same_statuses_over_http_for_the_same_seed() -> None:
    runs = []
    for _ in range(2):
        with start_sandbox(seed=11, faults=["next=503:rate=0.5"]) as sandbox:
            learner = create_learner(sandbox)
            runs.append(statuses(sandbox, NEXT, 12, learner=learner))

    assert runs[0] == runs[1]
    assert {200, 503} == set(runs[0])


def test_rules_are_listed_with_what_they_have_done(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    added = sandbox.state.faults.add("next-assessment", "503", times=3, retry_after=2)
    sandbox.state.faults.add("results", "latency", ms=300, rate=0.25)
    send(sandbox, "GET", NEXT, learner=learner)

    first, second = sandbox.state.faults.rules()

    assert first == {
        **added,
        "seen": 1,
        "applied": 1,
        "remaining": 2,
    }
    assert first["spec"] == "next-assessment=503:times=3,retry_after=2"
    assert second["spec"] == "results=latency:rate=0.25,ms=300"
    assert sandbox.state.faults.remove(first["id"]) is True
    assert sandbox.state.faults.remove(first["id"]) is False
    assert [rule["kind"] for rule in sandbox.state.faults.rules()] == ["latency"]


def test_a_bad_rule_is_refused_with_a_reason(sandbox: RunningSandbox) -> None:
    with pytest.raises(FaultError, match="submit-assessment only"):
        sandbox.state.faults.add("view-assessment", "expired_session")
    with pytest.raises(FaultError, match="Option 'seconds' does not apply to latency"):
        sandbox.state.faults.add("results", "latency", seconds=3)

    assert sandbox.state.faults.rules() == []


def test_faults_are_not_kept_in_the_state_file(tmp_path: Path) -> None:
    state_file = tmp_path / "state.json"
    with start_sandbox(state_file=state_file, faults=["next=503"]) as sandbox:
        create_learner(sandbox)
    assert "503" not in state_file.read_text()
    assert "fault" not in state_file.read_text()

    with start_sandbox(state_file=state_file) as sandbox:
        assert sandbox.state.faults.rules() == []
        assert len(sandbox.state.learners) == 1


# The compact syntax


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        (
            "view-assessment=503:times=2,retry_after=1",
            ("view-assessment", "503", {"times": "2", "retry_after": "1"}),
        ),
        ("results=latency:ms=300", ("results", "latency", {"ms": "300"})),
        ("submit=processed-500", ("submit-assessment", "processed_500", {})),
        (
            "create=drop:rate=0.25,after=3",
            ("create-learner", "drop", {"rate": "0.25", "after": "3"}),
        ),
        ("*=hang:seconds=1.5", ("*", "hang", {"seconds": "1.5"})),
        (
            " NEXT = Non-JSON : processed = yes ",
            ("next-assessment", "non_json", {"processed": "yes"}),
        ),
        (
            "submit=expired_session:times=1",
            ("submit-assessment", "expired_session", {"times": "1"}),
        ),
        ("results=error:status=504", ("results", "error", {"status": "504"})),
    ],
)
def test_it_parses_a_fault_spec(spec: str, parsed: tuple[str, str, dict[str, str]]) -> None:
    assert parse_fault_spec(spec) == parsed


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "ENDPOINT=KIND"),
        ("view-assessment", "expected ENDPOINT=KIND"),
        ("view-assessment=", "expected ENDPOINT=KIND"),
        ("nowhere=503", "Unknown endpoint 'nowhere'"),
        ("view=teapot", "Unknown fault kind 'teapot'"),
        ("view=503:ms=3", "Option 'ms' does not apply to 503"),
        ("view=503:times=0", "times must be >= 1"),
        ("view=503:times=two", "times must be an integer"),
        ("view=503:rate=1.5", "rate must be between 0 and 1"),
        ("view=503:times", "Bad option 'times'"),
        ("view=503:times=1,times=2", "given twice"),
        ("view=expired_session", "submit-assessment only"),
        ("view=error", "error needs the option status"),
        ("view=error:status=200", "status must be between 400 and 599"),
        ("view=non_json:processed=maybe", "processed must be true or false"),
        ("view=latency:ms=-5", "ms must be between 0 and 600000"),
    ],
)
def test_it_refuses_a_bad_fault_spec_saying_why(spec: str, message: str) -> None:
    with pytest.raises(FaultError) as refused:
        parse_fault_spec(spec)

    assert message in str(refused.value)


def test_a_rules_spec_reads_back_as_the_same_rule() -> None:
    faults = FaultSet(7)
    for spec in (
        "view=503:times=2",
        "results=latency:ms=300,rate=0.5,after=1",
        "next=non_json:processed=true",
        "submit=processed_500:status=502",
        "create=503:retry_after=none",
        "*=hang:seconds=1.5",
    ):
        listed = faults.add_spec(spec)["spec"]
        assert faults.add_spec(listed)["spec"] == listed


# The control API


def test_the_control_api_adds_lists_and_clears_rules(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    before = list(sandbox.state.requests)

    added = control(sandbox, "POST", json={"endpoint": "next", "kind": "503", "times": 1})
    listed = control(sandbox, "GET")

    assert added.status_code == 201
    assert added.json()["rule"]["spec"] == "next-assessment=503:times=1,retry_after=1"
    assert listed.json() == {"seed": 7, "rules": [added.json()["rule"]]}
    assert sandbox.state.requests == before  # the control API is not part of the API
    assert statuses(sandbox, NEXT, 2, learner=learner) == [503, 200]

    control(sandbox, "POST", json={"spec": "results=latency:ms=5"})
    control(sandbox, "POST", json={"spec": "results=500"})
    cleared = control(sandbox, "DELETE")
    assert cleared.json() == {"cleared": 2}
    assert control(sandbox, "GET").json()["rules"] == []


def test_the_control_api_removes_one_rule_and_sets_the_seed(sandbox: RunningSandbox) -> None:
    rule = control(sandbox, "POST", json={"spec": "results=500"}).json()["rule"]
    control(sandbox, "POST", json={"spec": "next=502"})

    assert control(sandbox, "DELETE", f"/{rule['id']}").json() == {"removed": rule["id"]}
    assert control(sandbox, "DELETE", f"/{rule['id']}").status_code == 404
    assert control(sandbox, "POST", "/seed", json={"seed": 42}).json() == {"seed": 42}
    assert control(sandbox, "POST", "/seed", json={"seed": "x"}).status_code == 400
    listing = control(sandbox, "GET").json()
    assert listing["seed"] == 42
    assert [rule["kind"] for rule in listing["rules"]] == ["502"]


@pytest.mark.parametrize("key", [None, "wrong-key"])
def test_the_control_api_needs_the_apikey(sandbox: RunningSandbox, key: str | None) -> None:
    sandbox.state.faults.add("results", "500")

    for method, suffix in (("GET", ""), ("POST", ""), ("DELETE", ""), ("DELETE", "/1")):
        response = control(sandbox, method, suffix, key=key, json={"spec": "next=500"})
        assert response.status_code == 401, (method, suffix)
        assert response.json() == {"error": "Missing or invalid apikey"}

    assert [rule["kind"] for rule in sandbox.state.faults.rules()] == ["500"]
    assert sandbox.state.requests == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"endpoint": "view", "kind": "teapot"}, "Unknown fault kind"),
        ({"endpoint": "view", "kind": "503", "times": 0}, "times must be >= 1"),
        ({"endpoint": "view", "kind": "latency", "ms": "slow"}, "ms must be an integer"),
        ({"endpoint": "view", "kind": "503", "colour": "red"}, "Option 'colour' does not apply"),
        ({"kind": "503"}, "endpoint and kind are required"),
        ({"spec": "view=503:times"}, "Bad option"),
        ({"spec": "view=503", "times": 2}, "alone"),
        ([], "must be a JSON object"),
    ],
)
def test_the_control_api_refuses_a_bad_rule(
    sandbox: RunningSandbox, body: Any, message: str
) -> None:
    response = control(sandbox, "POST", json=body)

    assert response.status_code == 400
    assert message in response.json()["error"]
    assert sandbox.state.faults.rules() == []


def test_the_control_api_is_not_under_the_api_prefix(sandbox: RunningSandbox) -> None:
    assert send(sandbox, "GET", "/_sandbox/faults").status_code == 404
    wrong_method = control(sandbox, "PUT")
    assert wrong_method.status_code == 405
    assert wrong_method.headers["Allow"] == "GET, POST, DELETE"
    assert control(sandbox, "GET", "/elsewhere").status_code == 404


# The management commands


def run_faults_command(sandbox: RunningSandbox, *arguments: str) -> str:
    """Run `manage.py sandbox_faults` against a sandbox and return what it printed."""
    out = StringIO()
    url = f"http://{sandbox.host}:{sandbox.port}"
    call_command("sandbox_faults", "--url", url, "--api-key", DEMO_API_KEY, *arguments, stdout=out)
    return out.getvalue()


def test_the_sandbox_faults_command_manages_a_running_sandbox(sandbox: RunningSandbox) -> None:
    added = run_faults_command(sandbox, "add", "view=503:times=2", "results=latency:ms=300")
    listed = run_faults_command(sandbox, "list")

    assert added.splitlines() == [
        "Added #1 view-assessment=503:times=2,retry_after=1",
        "Added #2 results=latency:ms=300",
    ]
    assert listed.splitlines() == [
        "2 fault rules (seed 7):",
        "  #1 view-assessment=503:times=2,retry_after=1  (applied 0, 2 to go)",
        "  #2 results=latency:ms=300  (applied 0)",
    ]
    assert json.loads(run_faults_command(sandbox, "--json", "list"))["rules"][1]["ms"] == 300
    assert run_faults_command(sandbox, "remove", "1") == "Removed #1.\n"
    assert run_faults_command(sandbox, "seed", "3") == "Seed set to 3.\n"
    assert run_faults_command(sandbox, "clear") == "Cleared 1 fault rule.\n"
    assert run_faults_command(sandbox, "list") == "No fault rules (seed 3).\n"
    assert sandbox.state.requests == []


def test_the_sandbox_faults_command_checks_every_spec_before_sending(
    sandbox: RunningSandbox,
) -> None:
    with pytest.raises(CommandError, match="Unknown fault kind 'teapot'"):
        run_faults_command(sandbox, "add", "view=503", "view=teapot")

    assert sandbox.state.faults.rules() == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("list", "extra"), "list takes no arguments"),
        (("add",), "add needs at least one"),
        (("remove", "one"), "remove takes one integer"),
        (("remove", "9"), "No fault rule 9"),
        (("seed",), "seed takes one integer"),
    ],
)
def test_the_sandbox_faults_command_explains_a_mistake(
    sandbox: RunningSandbox, arguments: tuple[str, ...], message: str
) -> None:
    with pytest.raises(CommandError, match=message):
        run_faults_command(sandbox, *arguments)


def test_the_sandbox_faults_command_reports_a_wrong_key_or_no_sandbox(
    sandbox: RunningSandbox,
) -> None:
    url = f"http://{sandbox.host}:{sandbox.port}"
    with pytest.raises(CommandError, match="refused the apikey"):
        call_command("sandbox_faults", "--url", url, "--api-key", "wrong", "list")
    with pytest.raises(CommandError, match="Cannot reach the sandbox"):
        call_command("sandbox_faults", "--url", "http://127.0.0.1:9", "list")
    with pytest.raises(CommandError, match="http"):
        call_command("sandbox_faults", "--url", "file:///etc/passwd", "list")


def test_the_sandbox_command_refuses_a_bad_fault_spec() -> None:
    with pytest.raises(CommandError, match="Unknown endpoint 'nowhere'"):
        call_command("sandbox", "--no-persist", "--fault", "nowhere=503")


# How long the sandbox command may take to stop after SIGINT. It takes about 0.1 s, 0.5 s on a
# loaded machine; the margin is for a machine far busier than that, not for a lost signal.
STOP_WITHIN = 30


def sandbox_command(*arguments: str, ignoring_sigint: bool = False) -> subprocess.Popen[str]:
    """Start `manage.py sandbox` on a free port, optionally as if SIGINT had been ignored."""
    command = [
        sys.executable,
        "manage.py",
        "sandbox",
        "--port",
        "0",
        "--no-persist",
        "--api-key",
        DEMO_API_KEY,
        *arguments,
    ]
    if ignoring_sigint:
        # As a background job of a script starts: SIGINT ignored, and exec keeps it ignored.
        command = ["sh", "-c", 'trap "" INT; exec "$@"', "sh", *command]
    return subprocess.Popen(
        command, cwd=settings.BASE_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def interrupt(server: subprocess.Popen[str]) -> str:
    """Stop the sandbox command as Ctrl-C does and return the rest of its output."""
    server.send_signal(signal.SIGINT)
    try:
        output, _ = server.communicate(timeout=STOP_WITHIN)
    except subprocess.TimeoutExpired:
        server.kill()  # never leave a sandbox running behind the test run
        server.communicate()
        pytest.fail(f"the sandbox command did not stop within {STOP_WITHIN} s of SIGINT")
    return output


def test_the_sandbox_command_starts_with_the_faults_given() -> None:
    server = sandbox_command(
        "--fault",
        "view-assessment=503:times=2,retry_after=1",
        "--fault",
        "results=latency:ms=300",
        "--seed",
        "7",
    )
    try:
        assert server.stdout is not None
        printed = [server.stdout.readline() for _ in range(6)]
        base_url = printed[0].split(" at ")[1].strip()
        origin = base_url.split("/plapi/")[0]
        listing = requests.get(
            f"{origin}/_sandbox/faults", headers={"apikey": DEMO_API_KEY}, timeout=5
        ).json()
    finally:
        interrupt(server)

    assert "(seed 7); 2 fault rules active." in printed[2]
    assert printed[3:5] == [
        "  #1 view-assessment=503:times=2,retry_after=1\n",
        "  #2 results=latency:ms=300\n",
    ]
    assert listing["seed"] == 7
    assert [rule["spec"] for rule in listing["rules"]] == [
        "view-assessment=503:times=2,retry_after=1",
        "results=latency:ms=300",
    ]


def test_the_sandbox_command_stops_on_ctrl_c_even_when_started_ignoring_it() -> None:
    # A background job of a script (`make test &`, a CI step) starts with SIGINT ignored, and
    # Python leaves it so: the sandbox then never stopped, and the test above timed out.
    server = sandbox_command(ignoring_sigint=True)
    try:
        assert server.stdout is not None
        printed = [server.stdout.readline() for _ in range(4)]
    finally:
        rest = interrupt(server)

    assert printed[-1] == "Quit with Ctrl-C.\n"
    assert rest == "Sandbox stopped.\n"
    assert server.returncode == 0
