"""The sandbox's own question bank: study-skills and wellbeing questions, levels and versions."""

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

# The small, closed set of icon names the sandbox sends in `Icon`. They are all names the
# portal already knows (kit/icons.py), so every answer shows its symbol out of the box.
# They are neutral marks of degree (an empty to a full circle), never praise or blame: on a
# question where agreeing is a sign of need, "Very like me" must not wear a star.
ICON_NAMES: tuple[str, ...] = (
    "never",
    "sometimes",
    "often",
    "always",
)

# One integer in next-assessment, one decimal in assessment_info: the spec carries both.
ASSESSMENT_VERSION = 2
ASSESSMENT_VERSION_DECIMAL = "2.1"

# Every question shares these timestamps: the bank was "published" once and "edited" once.
CREATED = "2024-09-02T09:00:00+01:00"
UPDATED = "2025-01-06T08:30:00+00:00"


@dataclass(frozen=True)
class Level:
    """A learner level code with the target group and title it brings."""

    code: str
    target_group: str
    title: str


LEVELS: dict[str, Level] = {
    "LOA_PARTNER_LEVEL1": Level(
        "LOA_PARTNER_LEVEL1",
        "FURTHER_EDUCATION",
        "Study skills and wellbeing check (further education)",
    ),
    "LOA_PARTNER_LEVEL2": Level(
        "LOA_PARTNER_LEVEL2", "SECONDARY", "Study skills and wellbeing check (secondary)"
    ),
    "LOA_PARTNER_LEVEL3": Level(
        "LOA_PARTNER_LEVEL3", "PRIMARY", "Study skills and wellbeing check (primary)"
    ),
}

DEFAULT_LEVEL = "LOA_PARTNER_LEVEL2"


@dataclass(frozen=True)
class BankAnswer:
    """One answer option: its id, text, icon name and score (0 = most need, 3 = least)."""

    id: str
    text: str
    icon: str
    score: int


@dataclass(frozen=True)
class BankQuestion:
    """One question with its topic group, focus area and four answers in display order."""

    id: str
    text: str
    group: str
    focus_area: str
    display_order: int
    answers: tuple[BankAnswer, ...]


# Two answer scales; a question says whether agreeing is good (positive) or a sign of need.
# Both use the same four degree icons in order, so the icon says "how much", never "how good".
_FREQUENCY = (
    ("Never", "never"),
    ("Sometimes", "sometimes"),
    ("Often", "often"),
    ("Always", "always"),
)
_LIKE_ME = (
    ("Not like me", "never"),
    ("A little like me", "sometimes"),
    ("Quite like me", "often"),
    ("Very like me", "always"),
)

# (id, group, focus area, text, scale, positive): listed in display order, group by group.
_QUESTIONS: tuple[tuple[str, str, str, str, tuple[tuple[str, str], ...], bool], ...] = (
    # Sleep and energy
    (
        "q-sleep-1",
        "Sleep and energy",
        SLEEP,
        "I wake up feeling rested and ready for the day.",
        _FREQUENCY,
        True,
    ),
    (
        "q-sleep-2",
        "Sleep and energy",
        SLEEP,
        "I feel too tired to concentrate in lessons or at work.",
        _FREQUENCY,
        False,
    ),
    (
        "q-sleep-3",
        "Sleep and energy",
        SLEEP,
        "I use a phone, tablet or other screen in bed when I should be asleep.",
        _FREQUENCY,
        False,
    ),
    (
        "q-stress-1",
        "Sleep and energy",
        STRESS,
        "Worries keep me awake at night.",
        _FREQUENCY,
        False,
    ),
    (
        "q-stress-2",
        "Sleep and energy",
        STRESS,
        "I get headaches, a tight chest or a tummy ache when I have a lot to do.",
        _FREQUENCY,
        False,
    ),
    # Learning and memory
    (
        "q-memory-1",
        "Learning and memory",
        MEMORY,
        "When I learn something, I can still remember it a week later.",
        _FREQUENCY,
        True,
    ),
    (
        "q-memory-2",
        "Learning and memory",
        MEMORY,
        "I test myself, with flashcards or quizzes, instead of only reading my notes again.",
        _FREQUENCY,
        True,
    ),
    (
        "q-memory-3",
        "Learning and memory",
        MEMORY,
        "I forget what I have learned soon after the lesson ends.",
        _LIKE_ME,
        False,
    ),
    (
        "q-focus-1",
        "Learning and memory",
        FOCUS,
        "I can work for twenty minutes without checking my phone or messages.",
        _FREQUENCY,
        True,
    ),
    (
        "q-focus-2",
        "Learning and memory",
        FOCUS,
        "I put off starting work until the last minute.",
        _FREQUENCY,
        False,
    ),
    (
        "q-focus-3",
        "Learning and memory",
        FOCUS,
        "I know why the things I am learning matter to me.",
        _LIKE_ME,
        True,
    ),
    # Feelings about tests
    (
        "q-exam-1",
        "Feelings about tests",
        EXAM_ANXIETY,
        "My mind goes blank in a test, even when I know the answers.",
        _FREQUENCY,
        False,
    ),
    (
        "q-exam-2",
        "Feelings about tests",
        EXAM_ANXIETY,
        "I feel sick or shaky in the days before a test.",
        _FREQUENCY,
        False,
    ),
    (
        "q-exam-3",
        "Feelings about tests",
        EXAM_ANXIETY,
        "If I start to panic during a test, I can calm myself down.",
        _LIKE_ME,
        True,
    ),
    (
        "q-confidence-1",
        "Feelings about tests",
        CONFIDENCE,
        "I believe I can get better at a subject if I keep practising.",
        _LIKE_ME,
        True,
    ),
    (
        "q-confidence-2",
        "Feelings about tests",
        CONFIDENCE,
        "I am happy to ask a question when I do not understand something.",
        _LIKE_ME,
        True,
    ),
    (
        "q-confidence-3",
        "Feelings about tests",
        CONFIDENCE,
        "I compare myself with others and feel I am not good enough.",
        _FREQUENCY,
        False,
    ),
    # Planning and pressure
    (
        "q-planning-1",
        "Planning and pressure",
        ORGANIZATION,
        "I write down when my work is due, in a planner, a calendar or an app.",
        _FREQUENCY,
        True,
    ),
    (
        "q-planning-2",
        "Planning and pressure",
        ORGANIZATION,
        "I can find the notes and things I need when I need them.",
        _FREQUENCY,
        True,
    ),
    (
        "q-planning-3",
        "Planning and pressure",
        ORGANIZATION,
        "I run out of time and hand in work late or unfinished.",
        _FREQUENCY,
        False,
    ),
    (
        "q-stress-3",
        "Planning and pressure",
        STRESS,
        "I feel there is too much to do and not enough time to do it.",
        _FREQUENCY,
        False,
    ),
    (
        "q-stress-4",
        "Planning and pressure",
        STRESS,
        "I make time for things I enjoy, such as friends, sport or hobbies.",
        _FREQUENCY,
        True,
    ),
)


def _build_questions() -> tuple[BankQuestion, ...]:
    """Turn the compact table above into questions with ids, orders and scored answers."""
    questions = []
    for order, (question_id, group, area, text, scale, positive) in enumerate(_QUESTIONS, 1):
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


QUESTIONS: tuple[BankQuestion, ...] = _build_questions()
QUESTIONS_BY_ID: dict[str, BankQuestion] = {question.id: question for question in QUESTIONS}
GROUPS: tuple[str, ...] = tuple(dict.fromkeys(question.group for question in QUESTIONS))
MAX_ANSWER_SCORE = 3


def questions_for_level(level_code: str) -> tuple[BankQuestion, ...]:
    """Return the questions of an assessment at a level (every level shares one bank)."""
    if level_code not in LEVELS:
        raise KeyError(level_code)
    return QUESTIONS
