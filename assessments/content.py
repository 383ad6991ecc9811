"""An attempt's stored content: the one place that knows its JSON shape.

`AssessmentAttempt.content` keeps the questions and answers as they were fetched, as JSON
(databases already hold it in this shape). Everything else reads and writes it through these
two functions, as the client's own `Question` and `Answer` types.
"""

from collections.abc import Iterable
from typing import Any

from partner_api import Answer, Question


def questions_to_json(questions: Iterable[Question]) -> dict[str, Any]:
    """Return fetched questions in the shape `AssessmentAttempt.content` stores."""
    return {
        "questions": [
            {
                "id": question.id,
                "text": question.text,
                "group": question.group,
                "display_order": question.display_order,
                "answers": [
                    {
                        "id": answer.id,
                        "copy": answer.copy,
                        "icon": answer.icon,
                        "display_order": answer.display_order,
                    }
                    for answer in question.answers
                ],
            }
            for question in questions
        ]
    }


def questions_from_json(data: dict[str, Any]) -> list[Question]:
    """Return the stored questions as the client's types, in the order they were stored."""
    # The stored shape leaves out what no page uses: when a question was created or updated,
    # and each answer's own question id (an answer is kept under the question it came with).
    return [
        Question(
            id=question["id"],
            text=question["text"],
            group=question["group"],
            display_order=question["display_order"],
            created=None,
            updated=None,
            answers=[
                Answer(
                    id=answer["id"],
                    question_id=question["id"],
                    display_order=answer["display_order"],
                    copy=answer["copy"],
                    icon=answer["icon"],
                )
                for answer in question["answers"]
            ],
        )
        for question in data.get("questions", [])
    ]


def has_questions(data: dict[str, Any]) -> bool:
    """Return whether stored content holds any question, without reading them."""
    return bool(data.get("questions"))
