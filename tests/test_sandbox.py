"""The sandbox upstream, over real HTTP: the spec's shapes and a strict upstream's refusals."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests
from django.conf import settings

from kit.icons import KNOWN_ICONS
from sandbox.bank import FOCUS_AREAS, GROUPS, ICON_NAMES, QUESTIONS, QUESTIONS_BY_ID
from sandbox.server import DEMO_API_KEY, RunningSandbox, start_sandbox
from sandbox.state import SandboxState
from tests.sandbox_calls import (
    CREATE,
    NEXT,
    call,
    create_learner,
    pick,
    results,
    submit,
    view_next,
)
from tests.source_imports import ROOT, modules_in_or_under_a_circle


@pytest.fixture
def sandbox() -> Iterator[RunningSandbox]:
    with start_sandbox() as running:
        yield running


def by_score(best: bool) -> list[dict[str, str]]:
    """Answer every question with its best (or worst) scoring answer."""
    choose = max if best else min
    return [
        {"question_id": q.id, "answer_id": choose(q.answers, key=lambda a: a.score).id}
        for q in QUESTIONS
    ]


def complete(
    sandbox: RunningSandbox, learner: str, responses: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    """Take the learner's next assessment with the given answers and return its results."""
    assessment_id, content = view_next(sandbox, learner)
    session = int(content["assessment_session"])
    submitted = submit(sandbox, learner, session, responses or pick(content))
    assert submitted.status_code == 200, submitted.text
    return results(sandbox, learner, assessment_id).json()


def assert_refused(response: requests.Response, status: int, message: str = "") -> None:
    """Check a refusal: its status, a JSON error body holding `message`, and a request id."""
    assert response.status_code == status, response.text
    assert set(response.json()) == {"error"}
    assert message in response.json()["error"]
    assert response.headers["X-Request-Id"].startswith("sbx-")


# Learner creation


def test_it_creates_a_learner_with_a_user_id_and_a_message(sandbox: RunningSandbox) -> None:
    response = call(
        sandbox,
        "POST",
        CREATE,
        json={
            "username": "amara",
            "password": "correct-horse",
            "dob": "2010-05-04",
            "email": "amara@example.org",
            "first_name": "Amara",
            "last_name": "Okafor",
        },
    )

    assert response.status_code == 201
    body = response.json()
    assert isinstance(body["user_id"], str) and body["user_id"]
    assert isinstance(body["message"], str)
    assert response.headers["X-Request-Id"].startswith("sbx-")


def test_it_refuses_a_taken_username(sandbox: RunningSandbox) -> None:
    create_learner(sandbox, "Amara")

    response = call(
        sandbox,
        "POST",
        CREATE,
        json={"username": "AMARA", "password": "correct-horse", "dob": "2010-05-04"},
    )

    assert_refused(response, 409, "taken")


@pytest.mark.parametrize("missing", ["username", "password", "dob"])
def test_it_refuses_a_learner_without_a_required_field(
    sandbox: RunningSandbox, missing: str
) -> None:
    body = {"username": "amara", "password": "correct-horse", "dob": "2010-05-04"}
    del body[missing]

    assert_refused(call(sandbox, "POST", CREATE, json=body), 400, missing)


@pytest.mark.parametrize(
    "dob",
    [
        "14/03/2009",
        "20090314",
        "2009-02-30",
        "not a date",
        (date.today() + timedelta(1)).isoformat(),
    ],
)
def test_it_refuses_a_bad_dob(sandbox: RunningSandbox, dob: str) -> None:
    body = {"username": "amara", "password": "correct-horse", "dob": dob}

    assert_refused(call(sandbox, "POST", CREATE, json=body), 400, "dob")


def test_it_refuses_a_short_password(sandbox: RunningSandbox) -> None:
    body = {"username": "amara", "password": "short12", "dob": "2010-05-04"}

    assert_refused(call(sandbox, "POST", CREATE, json=body), 400, "password")


def test_it_refuses_an_email_that_is_not_an_email(sandbox: RunningSandbox) -> None:
    body = {"username": "amara", "password": "correct-horse", "dob": "2010-05-04", "email": "amara"}

    assert_refused(call(sandbox, "POST", CREATE, json=body), 400, "email")


def test_it_refuses_an_unknown_level(sandbox: RunningSandbox) -> None:
    body = {"username": "amara", "password": "correct-horse", "dob": "2010-05-04"}

    response = call(sandbox, "POST", CREATE + "?level=LOA_PARTNER_LEVEL9", json=body)

    assert_refused(response, 400, "level")


def test_it_refuses_a_body_that_is_not_json(sandbox: RunningSandbox) -> None:
    response = call(sandbox, "POST", CREATE, data=b"{username: amara")

    assert_refused(response, 400, "JSON")


# Authentication and routing


@pytest.mark.parametrize("key", [None, "wrong-key"])
def test_it_refuses_a_missing_or_wrong_apikey(sandbox: RunningSandbox, key: str | None) -> None:
    learner = create_learner(sandbox)
    body = {"username": "other", "password": "correct-horse", "dob": "2010-05-04"}

    assert_refused(call(sandbox, "POST", CREATE, key=key, json=body), 401)
    assert_refused(call(sandbox, "GET", NEXT, key=key, learner=learner), 401)


@pytest.mark.parametrize("learner", [None, "", "no-such-learner"])
def test_it_refuses_a_missing_or_unknown_learner(sandbox: RunningSandbox, learner: str) -> None:
    assert_refused(call(sandbox, "GET", NEXT, learner=learner), 404)


def test_it_refuses_unknown_paths_and_wrong_methods(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)

    assert_refused(call(sandbox, "GET", "/assessments/everything", learner=learner), 404)
    assert_refused(call(sandbox, "GET", NEXT + "/", learner=learner), 404)
    response = call(sandbox, "POST", NEXT, learner=learner, json={})
    assert_refused(response, 405)
    assert response.headers["Allow"] == "GET"


# Next assessment


def test_it_offers_an_assessment_for_the_learners_level(sandbox: RunningSandbox) -> None:
    body = {"username": "pip", "password": "correct-horse", "dob": "2016-01-02"}
    created = call(sandbox, "POST", CREATE + "?level=LOA_PARTNER_LEVEL3", json=body)
    learner = created.json()["user_id"]

    response = call(sandbox, "GET", NEXT, learner=learner)

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "AVAILABLE"
    assert isinstance(body["assessment_id"], int)
    assert body["target_group"] == "PRIMARY"
    assert isinstance(body["assessment_version"], int)


def test_it_offers_secondary_when_no_level_is_given(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)

    assert call(sandbox, "GET", NEXT, learner=learner).json()["target_group"] == "SECONDARY"


def test_it_offers_the_same_assessment_until_it_is_submitted(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)

    first = call(sandbox, "GET", NEXT, learner=learner).json()["assessment_id"]
    again = call(sandbox, "GET", NEXT, learner=learner).json()["assessment_id"]

    assert again == first


def test_it_gives_each_learner_their_own_assessment_ids(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox, "learner")
    other_learner = create_learner(sandbox, "other_learner")

    mine = call(sandbox, "GET", NEXT, learner=learner).json()["assessment_id"]
    theirs = call(sandbox, "GET", NEXT, learner=other_learner).json()["assessment_id"]

    assert mine != theirs


def test_it_moves_through_the_sequence_and_then_has_nothing_to_offer() -> None:
    with start_sandbox(assessments_per_learner=2) as sandbox:
        learner = create_learner(sandbox)
        first_id, first = view_next(sandbox, learner)
        submit(sandbox, learner, int(first["assessment_session"]), pick(first))
        second_id, second = view_next(sandbox, learner)
        submit(sandbox, learner, int(second["assessment_session"]), pick(second))

        response = call(sandbox, "GET", NEXT, learner=learner)

    assert second_id != first_id
    assert first["assessment_info"]["Preassess"] is True
    assert second["assessment_info"]["Preassess"] is False
    assert response.status_code == 200
    assert response.json()["status"] == "NO_ASSESSMENT_AVAILABLE"
    assert response.json()["assessment_id"] is None


# Assessment content


def test_it_serves_the_content_with_the_specs_fields(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    assessment_id, content = view_next(sandbox, learner)

    assert set(content) == {"questions", "assessment_session", "assessment_info"}
    assert isinstance(content["assessment_session"], str)
    assert content["assessment_session"].isdigit()
    info = content["assessment_info"]
    assert set(info) == {"Title", "Level", "Preassess", "Version", "id"}
    assert isinstance(info["Title"], str) and info["Level"] == "LOA_PARTNER_LEVEL2"
    assert info["Preassess"] is True
    assert isinstance(info["Version"], float)
    assert info["id"] == assessment_id
    questions = content["questions"]
    assert sorted(q["DisplayOrder"] for q in questions) == list(range(1, len(questions) + 1))
    for question in questions:
        assert set(question) == {
            "id",
            "Question",
            "Group",
            "Created",
            "DisplayOrder",
            "UpdatedDateTime",
            "answers",
        }
        assert isinstance(question["id"], str) and question["Group"] in GROUPS
        assert datetime.fromisoformat(question["Created"]).tzinfo is not None
        assert datetime.fromisoformat(question["UpdatedDateTime"]).tzinfo is not None
        assert [a["DisplayOrder"] for a in sorted(question["answers"], key=_order)] == [1, 2, 3, 4]
        for answer in question["answers"]:
            assert set(answer) == {
                "id",
                "Question",
                "QuestionId",
                "DisplayOrder",
                "AnswerCopy",
                "Icon",
            }
            assert answer["QuestionId"] == question["id"]
            assert answer["Question"] == question["Question"]
            assert isinstance(answer["AnswerCopy"], str) and answer["Icon"] in ICON_NAMES


def _order(item: dict[str, Any]) -> int:
    return item["DisplayOrder"]


def test_it_uses_neutral_degree_icons_the_portal_knows() -> None:
    assert ICON_NAMES == ("never", "sometimes", "often", "always")
    assert set(ICON_NAMES) <= set(KNOWN_ICONS)
    for question in QUESTIONS:
        # The same scale of degree in display order, whichever way the question scores.
        assert tuple(answer.icon for answer in question.answers) == ICON_NAMES
    assert not {"star", "check", "cross"} & {a.icon for q in QUESTIONS for a in q.answers}


def test_it_groups_the_questions_into_pages_in_display_order(sandbox: RunningSandbox) -> None:
    _, content = view_next(sandbox, create_learner(sandbox))

    groups = [q["Group"] for q in sorted(content["questions"], key=_order)]

    assert len(groups) == len(QUESTIONS) >= 3 * len(FOCUS_AREAS)
    assert list(dict.fromkeys(groups)) == list(GROUPS)
    assert len(GROUPS) >= 3


def test_it_issues_a_new_session_on_each_view(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)

    _, first = view_next(sandbox, learner)
    _, second = view_next(sandbox, learner)

    assert first["assessment_session"] != second["assessment_session"]


def test_it_refuses_another_learners_assessment(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox, "learner")
    other_learner = create_learner(sandbox, "other_learner")
    assessment_id = call(sandbox, "GET", NEXT, learner=learner).json()["assessment_id"]

    view = f"/assessments/view-assessment/{assessment_id}"
    assert_refused(call(sandbox, "GET", view, learner=other_learner), 404)
    assert_refused(results(sandbox, other_learner, assessment_id), 404)
    assert_refused(call(sandbox, "GET", "/assessments/view-assessment/abc", learner=learner), 404)


# Submission


def test_it_accepts_a_complete_submission(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    _, content = view_next(sandbox, learner)

    response = submit(sandbox, learner, int(content["assessment_session"]), pick(content))

    assert response.status_code == 200
    assert response.json()["status"] == "SUBMITTED"


def test_it_accepts_the_session_as_a_string_of_digits(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    _, content = view_next(sandbox, learner)

    response = submit(sandbox, learner, content["assessment_session"], pick(content))

    assert response.status_code == 200


def test_it_accepts_a_session_from_an_earlier_view(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    _, first = view_next(sandbox, learner)
    view_next(sandbox, learner)

    response = submit(sandbox, learner, int(first["assessment_session"]), pick(first))

    assert response.status_code == 200


def test_it_refuses_the_wrong_number_of_responses(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    _, content = view_next(sandbox, learner)

    response = submit(sandbox, learner, int(content["assessment_session"]), pick(content)[:-1])

    expected = f"Expected {len(QUESTIONS)} responses, got {len(QUESTIONS) - 1}"
    assert_refused(response, 400, expected)


def test_it_refuses_a_question_answered_twice(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    _, content = view_next(sandbox, learner)
    responses = pick(content)
    responses[-1] = pick(content, 2)[0]

    response = submit(sandbox, learner, int(content["assessment_session"]), responses)

    assert_refused(response, 400, responses[0]["question_id"])


def test_it_refuses_an_answer_from_another_question(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    _, content = view_next(sandbox, learner)
    responses = pick(content)
    foreign = responses[1]["answer_id"]
    responses[0]["answer_id"] = foreign

    response = submit(sandbox, learner, int(content["assessment_session"]), responses)

    assert_refused(response, 400, foreign)


@pytest.mark.parametrize("item", ["q-sleep-1", {"question": "q-sleep-1", "answer": "a-sleep-1-1"}])
def test_it_refuses_responses_of_another_shape(sandbox: RunningSandbox, item: Any) -> None:
    learner = create_learner(sandbox)
    _, content = view_next(sandbox, learner)
    responses: list[Any] = pick(content)
    responses[0] = item

    response = submit(sandbox, learner, int(content["assessment_session"]), responses)

    assert_refused(response, 400)


@pytest.mark.parametrize("session", [123, "123", None, "12a", 1.5, True])
def test_it_refuses_an_unknown_session(sandbox: RunningSandbox, session: Any) -> None:
    learner = create_learner(sandbox)
    _, content = view_next(sandbox, learner)

    response = submit(sandbox, learner, session, pick(content))

    assert_refused(response, 400, "Unknown or expired session")


def test_it_refuses_another_learners_session(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox, "learner")
    other_learner = create_learner(sandbox, "other_learner")
    _, content = view_next(sandbox, learner)

    response = submit(sandbox, other_learner, int(content["assessment_session"]), pick(content))

    assert_refused(response, 400, "Unknown or expired session")


def test_it_refuses_an_expired_session(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    _, content = view_next(sandbox, learner)
    sandbox.state.expire_sessions(learner)

    response = submit(sandbox, learner, int(content["assessment_session"]), pick(content))

    assert_refused(response, 400, "Unknown or expired session")


def test_it_refuses_a_second_submission(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    _, content = view_next(sandbox, learner)
    session = int(content["assessment_session"])
    assert submit(sandbox, learner, session, pick(content)).status_code == 200

    response = submit(sandbox, learner, session, pick(content, 2))

    assert_refused(response, 409)


def test_it_refuses_a_submission_that_is_not_json(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)

    response = call(
        sandbox, "POST", "/assessments/submit-assessment", learner=learner, data=b"[1, 2"
    )

    assert_refused(response, 400, "JSON")


# Results


def test_it_has_no_results_before_submission(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    assessment_id, _ = view_next(sandbox, learner)

    assert_refused(results(sandbox, learner, assessment_id), 404)


def test_it_returns_results_with_the_specs_fields(sandbox: RunningSandbox) -> None:
    body = complete(sandbox, create_learner(sandbox))

    assert set(body) == {
        "LOAScore",
        "RiskLevel",
        "TraitSigns",
        "TraitTitle",
        "TraitTips",
        "TraitCopy",
        "ResultDescription",
        "focus_areas",
    }
    assert isinstance(body["LOAScore"], float) and 0 <= body["LOAScore"] <= 100
    assert round(body["LOAScore"], 2) == body["LOAScore"]
    assert body["RiskLevel"] in {"LOW", "MODERATE", "HIGH"}
    assert body["TraitSigns"].startswith("<ul><li>")
    assert body["TraitTips"].startswith("<p>") and "<ol><li>" in body["TraitTips"]
    assert body["ResultDescription"].startswith("<p>")
    assert "<" not in body["TraitTitle"] + body["TraitCopy"]
    assert [area["search_filter_name"] for area in body["focus_areas"]] == list(FOCUS_AREAS)
    for area in body["focus_areas"]:
        assert area["needs_help"] in {"yes", "no"}
        assert isinstance(area["questions_count"], int) and area["questions_count"] >= 3
    assert sum(area["questions_count"] for area in body["focus_areas"]) == len(QUESTIONS)


def test_it_scores_the_same_answers_the_same_way(sandbox: RunningSandbox) -> None:
    mine = complete(sandbox, create_learner(sandbox, "learner"), pick_by_position(3))
    theirs = complete(sandbox, create_learner(sandbox, "other_learner"), pick_by_position(3))

    assert mine == theirs


def pick_by_position(position: int) -> list[dict[str, str]]:
    """Answer every bank question with the answer at one display position."""
    return [{"question_id": q.id, "answer_id": q.answers[position - 1].id} for q in QUESTIONS]


def test_it_flags_focus_areas_from_the_answers(sandbox: RunningSandbox) -> None:
    thriving = complete(sandbox, create_learner(sandbox, "learner"), by_score(best=True))
    struggling = complete(sandbox, create_learner(sandbox, "other_learner"), by_score(best=False))

    assert {area["needs_help"] for area in thriving["focus_areas"]} == {"no"}
    assert {area["needs_help"] for area in struggling["focus_areas"]} == {"yes"}
    assert (thriving["LOAScore"], thriving["RiskLevel"]) == (100.0, "LOW")
    assert (struggling["LOAScore"], struggling["RiskLevel"]) == (0.0, "HIGH")
    assert thriving["TraitTitle"] != struggling["TraitTitle"]


def test_it_picks_the_trait_of_the_area_in_greatest_need(sandbox: RunningSandbox) -> None:
    responses = by_score(best=True)
    worst = {item["question_id"]: item["answer_id"] for item in by_score(best=False)}
    for item in responses:
        if QUESTIONS_BY_ID[item["question_id"]].focus_area == "EXAM ANXIETY":
            item["answer_id"] = worst[item["question_id"]]

    body = complete(sandbox, create_learner(sandbox), responses)

    flagged = [a["search_filter_name"] for a in body["focus_areas"] if a["needs_help"] == "yes"]
    assert flagged == ["EXAM ANXIETY"]
    assert body["TraitTitle"] == "Tests feel bigger than they are"
    assert "EXAM ANXIETY" in body["ResultDescription"]


# The sandbox's own instruments


def test_it_counts_requests(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    call(sandbox, "GET", NEXT, learner=learner)
    call(sandbox, "GET", NEXT, learner=learner)
    call(sandbox, "GET", NEXT, key="wrong", learner=learner)

    assert sandbox.state.count() == 4
    assert sandbox.state.count(endpoint="next-assessment") == 3
    assert sandbox.state.count(method="POST", endpoint="create-learner") == 1
    assert sandbox.state.requests[-1] == ("GET", "next-assessment", 401)


def test_it_answers_concurrent_requests(sandbox: RunningSandbox) -> None:
    user_ids: list[str] = []

    def register(number: int) -> None:
        user_ids.append(create_learner(sandbox, f"learner{number}"))

    threads = [threading.Thread(target=register, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(set(user_ids)) == 12
    assert sandbox.state.count(endpoint="create-learner") == 12


def test_it_can_fail_after_doing_the_work(sandbox: RunningSandbox) -> None:
    learner = create_learner(sandbox)
    assessment_id, content = view_next(sandbox, learner)
    sandbox.state.inject_failure("submit-assessment", status=503, after_processing=True)

    response = submit(sandbox, learner, int(content["assessment_session"]), pick(content))

    assert_refused(response, 503)
    assert results(sandbox, learner, assessment_id).status_code == 200


def test_it_never_prints_the_key_or_the_password(capsys: pytest.CaptureFixture[str]) -> None:
    with start_sandbox(quiet=False) as sandbox:
        create_learner(sandbox, "amara", email="amara@example.org")

    printed = capsys.readouterr().err
    assert "POST /plapi/v1/partners/users/create-learner 201" in printed
    assert DEMO_API_KEY not in printed
    assert "correct-horse" not in printed


# Persistence


def where_the_command_keeps_its_state(*arguments: str) -> str:
    """Start `manage.py sandbox` on a free port; return the line saying where its state is."""
    command = [sys.executable, "manage.py", "sandbox", "--port", "0", "--api-key", DEMO_API_KEY]
    server = subprocess.Popen(
        [*command, *arguments],
        cwd=settings.BASE_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        assert "Sandbox upstream serving at" in server.stdout.readline()
        return server.stdout.readline().strip()
    finally:
        server.send_signal(signal.SIGINT)  # as Ctrl-C stops it
        try:
            server.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.communicate()


def test_it_keeps_its_state_in_memory_unless_given_a_file(tmp_path: Path) -> None:
    with start_sandbox() as sandbox:
        create_learner(sandbox)

    assert sandbox.state.state_file is None
    in_memory = "State is kept in memory only."
    assert where_the_command_keeps_its_state("--no-persist") == in_memory
    assert where_the_command_keeps_its_state("--state-file", "") == in_memory
    default = Path(settings.BASE_DIR) / ".sandbox-state.json"
    assert where_the_command_keeps_its_state().startswith(f"State is kept in {default} (")
    assert where_the_command_keeps_its_state("--state-file", str(tmp_path / "s.json")) == (
        f"State is kept in {tmp_path / 's.json'} (0 learners loaded)."
    )


def test_it_remembers_learners_and_sessions_across_a_restart(tmp_path: Path) -> None:
    state_file = tmp_path / "state.json"
    with start_sandbox(state_file=state_file) as sandbox:
        learner = create_learner(sandbox, "amara", email="amara@example.org")
        assessment_id, content = view_next(sandbox, learner)
    assert state_file.exists()

    with start_sandbox(state_file=state_file) as sandbox:
        again = call(sandbox, "GET", NEXT, learner=learner)
        assert again.status_code == 200, again.text
        assert again.json()["assessment_id"] == assessment_id
        submitted = submit(sandbox, learner, int(content["assessment_session"]), pick(content))
        assert submitted.status_code == 200, submitted.text
        assert results(sandbox, learner, assessment_id).status_code == 200
        body = {"username": "AMARA", "password": "correct-horse", "dob": "2009-03-14"}
        assert_refused(call(sandbox, "POST", CREATE, json=body), 409, "taken")

    with start_sandbox(state_file=state_file) as sandbox:
        assert results(sandbox, learner, assessment_id).status_code == 200
        following = call(sandbox, "GET", NEXT, learner=learner).json()["assessment_id"]
        other = call(sandbox, "GET", NEXT, learner=create_learner(sandbox, "ben")).json()
    # Ids keep counting after a restart, so no new offer reuses an old one.
    assert len({assessment_id, following, other["assessment_id"]}) == 3
    # Only the state file is left behind: every save replaced it through a temporary file.
    assert [path.name for path in tmp_path.iterdir()] == ["state.json"]


def test_it_saves_an_expired_session(tmp_path: Path) -> None:
    state_file = tmp_path / "state.json"
    with start_sandbox(state_file=state_file) as sandbox:
        learner = create_learner(sandbox)
        _, content = view_next(sandbox, learner)
        sandbox.state.expire_sessions(learner)

    with start_sandbox(state_file=state_file) as sandbox:
        response = submit(sandbox, learner, int(content["assessment_session"]), pick(content))

    assert_refused(response, 400, "Unknown or expired session")


def test_it_never_writes_the_password_or_the_key(tmp_path: Path) -> None:
    state_file = tmp_path / "state.json"
    with start_sandbox(state_file=state_file) as sandbox:
        learner = create_learner(sandbox, "amara", email="amara@example.org")
        complete(sandbox, learner)

    saved = state_file.read_text()
    assert learner in saved and "amara@example.org" in saved
    assert "correct-horse" not in saved
    assert "password" not in saved
    assert DEMO_API_KEY not in saved


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"\xff\xfe\x00",
        b"[]",
        b'{"format": 1}',
        b'{"format": 99, "learners": [], "offers": [], "sessions": {}}',
        # Well formed, but a session names an assessment that does not exist.
        b'{"format": 1, "next_assessment_id": 1001, "learners": [], "offers": [],'
        b' "sessions": {"123456789012": ["someone", 1001]}}',
    ],
)
def test_it_starts_empty_from_a_corrupt_state_file(
    tmp_path: Path, content: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    state_file = tmp_path / "state.json"
    state_file.write_bytes(content)

    with start_sandbox(state_file=state_file) as sandbox:
        assert sandbox.state.learners == {}
        assert_refused(call(sandbox, "GET", NEXT, learner="someone"), 404)
        create_learner(sandbox)

    assert "corrupt state file" in capsys.readouterr().err
    # The corrupt file is kept aside for a look, and the new state saved in its place.
    assert (tmp_path / "state.json.corrupt").read_bytes() == content
    assert len(json.loads(state_file.read_text())["learners"]) == 1


def test_it_round_trips_its_state_through_json() -> None:
    with start_sandbox() as sandbox:
        learner = create_learner(sandbox, first_name="Amara", last_name=None)
        complete(sandbox, learner)
        view_next(sandbox, learner)
        saved = json.loads(json.dumps(sandbox.state.to_json()))

    restored = SandboxState()
    restored.restore(saved)

    assert restored.to_json() == saved
    assert restored.learners == sandbox.state.learners
    assert restored.offers == sandbox.state.offers
    assert restored.sessions == sandbox.state.sessions


def test_its_modules_import_one_way() -> None:
    # state <- endpoints <- app <- server: each module can be read without the ones above it.
    assert modules_in_or_under_a_circle(ROOT / "sandbox") == []
