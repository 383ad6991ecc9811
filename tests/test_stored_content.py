"""An attempt's stored content: the client's types in, the same JSON shape as ever out."""

from datetime import UTC, datetime

from assessments.content import questions_from_json, questions_to_json
from assessments.models import AssessmentAttempt
from partner_api import Answer, Question

# As databases already hold it (written since the first release): it must not change.
STORED = {
    "questions": [
        {
            "id": "q-sleep",
            "text": "I sleep well",
            "group": "Sleep",
            "display_order": 1,
            "answers": [
                {"id": "a-never", "copy": "Never", "icon": "never", "display_order": 1},
                {"id": "a-often", "copy": "Often", "icon": "", "display_order": 2},
            ],
        }
    ]
}


def fetched_question(*, created: datetime | None = None) -> Question:
    return Question(
        id="q-sleep",
        text="I sleep well",
        group="Sleep",
        display_order=1,
        created=created,
        updated=created,
        answers=[
            Answer("a-never", question_id="q-sleep", display_order=1, copy="Never", icon="never"),
            Answer("a-often", question_id="q-sleep", display_order=2, copy="Often", icon=""),
        ],
    )


def test_fetched_questions_are_stored_in_the_shape_databases_already_hold():
    stamp = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)

    assert questions_to_json([fetched_question(created=stamp)]) == STORED


def test_stored_content_reads_back_as_the_clients_types():
    assert questions_from_json(STORED) == [fetched_question()]


def test_an_attempt_without_content_has_no_questions():
    attempt = AssessmentAttempt(content={})

    assert attempt.questions == [] and not attempt.has_content


def test_storing_new_questions_replaces_what_the_attempt_read_before():
    attempt = AssessmentAttempt(content=STORED)
    assert attempt.questions[0].text == "I sleep well"
    newer = Question(
        id="q-new", text="A new question", group="Focus", display_order=1, created=None,
        updated=None, answers=[Answer("a-1", "q-new", 1, "Yes", "")],
    )  # fmt: skip

    attempt.set_questions([newer])

    assert attempt.content == questions_to_json([newer])
    assert attempt.questions == [newer] and attempt.content["questions"][0]["id"] == "q-new"
