"""The shapes every question bank shares: the seven focus areas, questions, answers, scales."""

from __future__ import annotations

from dataclasses import dataclass

# The seven focus area names, spelled exactly as the spec lists them (in the spec's order).
SLEEP = "SLEEP & TIREDNESS"
MEMORY = "RETAINING & RECALLING INFORMATION"
EXAM_ANXIETY = "EXAM ANXIETY"
FOCUS = "FOCUS & MOTIVATION"
ORGANIZATION = "ORGANIZATION & TIME MANAGEMENT"
STRESS = "STRESS & STRAIN"
CONFIDENCE = "CONFIDENCE"

FOCUS_AREAS: tuple[str, ...] = (
    SLEEP,
    MEMORY,
    EXAM_ANXIETY,
    FOCUS,
    ORGANIZATION,
    STRESS,
    CONFIDENCE,
)

# A scale is its answers in display order: (answer text, icon name).
Scale = tuple[tuple[str, str], ...]
# A bank's compact table: (id, group, focus area, text, scale, positive), in display order.
QuestionRow = tuple[str, str, str, str, Scale, bool]


@dataclass(frozen=True)
class BankAnswer:
    """One answer option: its id, text, icon name and score (0 = most need)."""

    id: str
    text: str
    icon: str
    score: int


@dataclass(frozen=True)
class BankQuestion:
    """One question with its topic group, focus area and answers in display order."""

    id: str
    text: str
    group: str
    focus_area: str
    display_order: int
    answers: tuple[BankAnswer, ...]

    @property
    def top_score(self) -> int:
        """Return the score of the answer that shows the least need."""
        return max(answer.score for answer in self.answers)


def build_questions(rows: tuple[QuestionRow, ...]) -> tuple[BankQuestion, ...]:
    """Turn a compact table into questions with ids, orders and scored answers."""
    questions = []
    for order, (question_id, group, area, text, scale, positive) in enumerate(rows, 1):
        stem = question_id.removeprefix("q-")
        answers = tuple(
            BankAnswer(
                id=f"a-{stem}-{position}",
                text=answer_text,
                icon=icon,
                # A positive statement scores by how often it holds; a negative one, the reverse.
                score=(position - 1) if positive else (len(scale) - position),
            )
            for position, (answer_text, icon) in enumerate(scale, 1)
        )
        questions.append(BankQuestion(question_id, text, group, area, order, answers))
    return tuple(questions)
