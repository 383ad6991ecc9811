"""The sandbox's read-only submissions report, which the load test counts from."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from sandbox.server import DEMO_API_KEY, RunningSandbox, start_sandbox
from tests.sandbox_calls import create_learner, pick, submit, view_next


@pytest.fixture
def sandbox() -> Iterator[RunningSandbox]:
    with start_sandbox(seed=3, faults=["submit=503:times=1"]) as running:
        yield running


def report(sandbox: RunningSandbox, *, key: str = DEMO_API_KEY, method: str = "GET"):
    url = f"http://{sandbox.host}:{sandbox.port}/_sandbox/submissions"
    return requests.request(method, url, headers={"apikey": key}, timeout=5)


def test_the_report_counts_accepted_and_refused_submissions_with_their_answers(
    sandbox: RunningSandbox,
) -> None:
    learner = create_learner(sandbox)
    assessment_id, content = view_next(sandbox, learner)
    responses = pick(content, position=2)
    session = int(content["assessment_session"])
    assert submit(sandbox, learner, session, responses).status_code == 503  # injected
    assert submit(sandbox, learner, session, responses).status_code == 200
    assert submit(sandbox, learner, session, responses).status_code == 409  # a resend

    answer = report(sandbox)

    assert answer.status_code == 200
    body = answer.json()
    (entry,) = body["assessments"]
    assert entry["assessment_id"] == assessment_id
    assert entry["user_id"] == learner
    assert entry["accepted"] == 1
    assert entry["refused_as_already_submitted"] == 1
    assert entry["answers"] == {r["question_id"]: r["answer_id"] for r in responses}
    assert body["submit_statuses"] == {"503": 1, "200": 1, "409": 1}


def test_an_offer_not_yet_submitted_has_no_answers(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    view_next(sandbox, learner)

    (entry,) = report(sandbox).json()["assessments"]

    assert entry["user_id"] == learner  # this learner's offer
    assert entry["accepted"] == 0
    assert entry["answers"] is None


def test_the_report_needs_the_key_and_changes_nothing(sandbox: RunningSandbox) -> None:
    assert report(sandbox, key="wrong").status_code == 401
    assert report(sandbox, method="POST").status_code == 405
    assert report(sandbox).json() == {"assessments": [], "submit_statuses": {}}
