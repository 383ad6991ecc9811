"""The sandbox's own question banks: study-skills and wellbeing questions, levels and versions.

Secondary and further education answer the bank below; primary pupils (ages 4 to 11) answer
their own (sandbox.primary), with pictures the sandbox serves (sandbox.icons).
"""

from __future__ import annotations

from dataclasses import dataclass

from sandbox.primary import PRIMARY_QUESTIONS
from sandbox.questions import (
    CONFIDENCE,
    EXAM_ANXIETY,
    FOCUS,
    MEMORY,
    ORGANIZATION,
    SLEEP,
    STRESS,
    BankQuestion,
    QuestionRow,
    Scale,
    build_questions,
)
from sandbox.questions import FOCUS_AREAS as FOCUS_AREAS  # read from here by the tools

# The small, closed set of icon names the secondary bank sends in `Icon`. They are all names the
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


PRIMARY = "PRIMARY"  # the target group of ages 4 to 11, who answer the primary bank


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
        "LOA_PARTNER_LEVEL3", PRIMARY, "Study skills and wellbeing check (primary)"
    ),
}

DEFAULT_LEVEL = "LOA_PARTNER_LEVEL2"


# Two answer scales; a question says whether agreeing is good (positive) or a sign of need.
# Both use the same four degree icons in order, so the icon says "how much", never "how good".
_FREQUENCY: Scale = (
    ("Never", "never"),
    ("Sometimes", "sometimes"),
    ("Often", "often"),
    ("Always", "always"),
)
_LIKE_ME: Scale = (
    ("Not like me", "never"),
    ("A little like me", "sometimes"),
    ("Quite like me", "often"),
    ("Very like me", "always"),
)

# (id, group, focus area, text, scale, positive): listed in display order, group by group.
_QUESTIONS: tuple[QuestionRow, ...] = (
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


# The bank for secondary and further education (today's bank, unchanged).
QUESTIONS: tuple[BankQuestion, ...] = build_questions(_QUESTIONS)
QUESTIONS_BY_ID: dict[str, BankQuestion] = {question.id: question for question in QUESTIONS}
GROUPS: tuple[str, ...] = tuple(dict.fromkeys(question.group for question in QUESTIONS))


def questions_for_level(level_code: str) -> tuple[BankQuestion, ...]:
    """Return the questions of an assessment at a level: primary pupils have their own bank."""
    if LEVELS[level_code].target_group == PRIMARY:
        return PRIMARY_QUESTIONS
    return QUESTIONS
