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


def check_answers_sections(attempt: AssessmentAttempt) -> list[dict]:
    """Return each page with its questions and the answer chosen for each (or None)."""
    answers = saved_answers(attempt)
    sections = []
    for page in question_pages(attempt):
        rows = []
        for question in page.questions:
            chosen = answers.get(question["id"])
            answer = next((a for a in question["answers"] if a["id"] == chosen), None)
            rows.append({"question": question, "answer": answer})
        sections.append({"page": page, "rows": rows})
    return sections


# Attempts the learner must finish (or whose answers are not yet safely delivered) before a
# new one is asked for: the upstream would offer the same assessment again anyway.
UNFINISHED_STATES = [
    AssessmentAttempt.State.IN_PROGRESS,
    AssessmentAttempt.State.SUBMITTING,
    AssessmentAttempt.State.SUBMIT_PENDING,
    AssessmentAttempt.State.REJECTED,
]
FINISHED_STATES = [AssessmentAttempt.State.COMPLETED, AssessmentAttempt.State.SUBMITTED]


def current_attempt(attempts: list[AssessmentAttempt]) -> AssessmentAttempt | None:
    """Return the attempt the learner's page leads with: unfinished first, then offered."""
    unfinished = (a for a in attempts if a.state in UNFINISHED_STATES)
    return next(unfinished, None) or next((a for a in attempts if a.is_open), None)
