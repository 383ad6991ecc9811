"""Raw HTTP calls to the sandbox upstream, with the headers a partner's client sends."""

from typing import Any

import requests

from sandbox.server import DEMO_API_KEY, RunningSandbox

CREATE = "/users/create-learner"
NEXT = "/assessments/next-assessment"


def call(
    sandbox: RunningSandbox,
    method: str,
    path: str,
    *,
    learner: str | None = None,
    key: str | None = DEMO_API_KEY,
    **kwargs: Any,
) -> requests.Response:
    """Send one request to the sandbox with the apikey and learnerid headers."""
    headers = {}
    if key is not None:
        headers["apikey"] = key
    if learner is not None:
        headers["learnerid"] = learner
    return requests.request(method, sandbox.base_url + path, headers=headers, timeout=5, **kwargs)


def create_learner(sandbox: RunningSandbox, username: str = "learner", **fields: Any) -> str:
    """Register a learner and return its user_id."""
    body = {"username": username, "password": "correct-horse", "dob": "2009-03-14", **fields}
    response = call(sandbox, "POST", CREATE, json=body)
    assert response.status_code == 201, response.text
    return response.json()["user_id"]


def view_next(sandbox: RunningSandbox, learner: str) -> tuple[int, dict[str, Any]]:
    """Return the learner's next assessment id and its content."""
    assessment_id = call(sandbox, "GET", NEXT, learner=learner).json()["assessment_id"]
    content = call(sandbox, "GET", f"/assessments/view-assessment/{assessment_id}", learner=learner)
    assert content.status_code == 200, content.text
    return assessment_id, content.json()


def pick(content: dict[str, Any], position: int = 1) -> list[dict[str, str]]:
    """Answer every question with the answer at one display position."""
    responses = []
    for question in sorted(content["questions"], key=lambda question: question["DisplayOrder"]):
        answer = next(a for a in question["answers"] if a["DisplayOrder"] == position)
        responses.append({"question_id": question["id"], "answer_id": answer["id"]})
    return responses


def submit(
    sandbox: RunningSandbox, learner: str, session: Any, responses: list[Any]
) -> requests.Response:
    """Submit responses with a session."""
    return call(
        sandbox,
        "POST",
        "/assessments/submit-assessment",
        learner=learner,
        json={"session": session, "responses": responses},
    )


def results(sandbox: RunningSandbox, learner: str, assessment_id: int) -> requests.Response:
    """Fetch an assessment's results."""
    return call(sandbox, "GET", f"/assessments/results/{assessment_id}", learner=learner)
