"""The shape of the taking flow, derived from an attempt's stored content (no upstream calls)."""

from dataclasses import dataclass

from assessments.models import AssessmentAttempt


@dataclass(frozen=True)
class QuestionPage:
    """One page of the flow: the questions of one topic Group, in DisplayOrder."""

    number: int
    group: str
    questions: list[dict]


def question_pages(attempt: AssessmentAttempt) -> list[QuestionPage]:
    """Split the stored questions into one page per Group, in order of first appearance."""
    groups: dict[str, list[dict]] = {}
    for position, question in enumerate(attempt.questions, start=1):
        group = question["group"].strip() or "Questions"  # a page always has a heading
        groups.setdefault(group, []).append({**question, "position": position})
    return [
        QuestionPage(number=number, group=group, questions=questions)
        for number, (group, questions) in enumerate(groups.items(), start=1)
    ]


def saved_answers(attempt: AssessmentAttempt) -> dict[str, str]:
    """Return the learner's saved choices as question id -> answer id."""
    return dict(attempt.answers.values_list("question_id", "answer_id"))


def unanswered_questions(attempt: AssessmentAttempt, answers: dict[str, str]) -> list[dict]:
    """Return the questions without a valid saved answer, in display order."""
    missing = []
    for question in attempt.questions:
        valid = {answer["id"] for answer in question["answers"]}
        if answers.get(question["id"]) not in valid:
            missing.append(question)
    return missing


def first_page_to_resume(attempt: AssessmentAttempt, answers: dict[str, str]) -> int | None:
    """Return the number of the first page with an unanswered question, or None if all done."""
    missing = {question["id"] for question in unanswered_questions(attempt, answers)}
    for page in question_pages(attempt):
        if any(question["id"] in missing for question in page.questions):
            return page.number
    return None
