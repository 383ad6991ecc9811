"""The primary bank (ages 4 to 11): short questions to read aloud, pictures, and child words.

Every word here is meant for a five-year-old hearing it read aloud: short sentences, things
that happen at school and at home, and nothing about phones, work, planners, revision or exams.
Answers say how often or how much, each with a neutral picture of amount (sandbox.icons).
"""

from __future__ import annotations

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
from sandbox.traits import Trait

# How often: a jar from empty to full. How much like me: a ring from empty to filled.
HOW_OFTEN: Scale = (
    ("No, never", "jar-empty"),
    ("Sometimes", "jar-low"),
    ("A lot", "jar-high"),
    ("Always", "jar-full"),
)
LIKE_ME: Scale = (
    ("Not like me", "ring-empty"),
    ("A bit like me", "ring-small"),
    ("A lot like me", "ring-full"),
)

_SLEEPING = "Sleeping and waking up"
_LEARNING = "Learning and remembering"
_TESTS = "Tests and quizzes"
_SCHOOL_DAY = "Me at school"

# (id, group, focus area, text, scale, positive): in display order, group by group.
_ROWS: tuple[QuestionRow, ...] = (
    ("q-primary-sleep-1", _SLEEPING, SLEEP, "Do you feel tired at school?", HOW_OFTEN, False),
    (
        "q-primary-sleep-2",
        _SLEEPING,
        SLEEP,
        "Do you wake up with lots of energy?",
        HOW_OFTEN,
        True,
    ),
    (
        "q-primary-stress-1",
        _SLEEPING,
        STRESS,
        "Do worries keep you awake at night?",
        HOW_OFTEN,
        False,
    ),
    (
        "q-primary-memory-1",
        _LEARNING,
        MEMORY,
        "Do you find it easy to remember what your teacher said?",
        HOW_OFTEN,
        True,
    ),
    (
        "q-primary-memory-2",
        _LEARNING,
        MEMORY,
        "Do you forget things you learned the day before?",
        HOW_OFTEN,
        False,
    ),
    (
        "q-primary-focus-1",
        _LEARNING,
        FOCUS,
        "Can you keep listening until your teacher has finished talking?",
        HOW_OFTEN,
        True,
    ),
    (
        "q-primary-exam-1",
        _TESTS,
        EXAM_ANXIETY,
        "Do you feel wobbly or worried before a test or a quiz?",
        HOW_OFTEN,
        False,
    ),
    (
        "q-primary-exam-2",
        _TESTS,
        EXAM_ANXIETY,
        "When I feel worried, I can make myself feel calm again.",
        LIKE_ME,
        True,
    ),
    (
        "q-primary-planning-1",
        _SCHOOL_DAY,
        ORGANIZATION,
        "Can you find your things when you need them?",
        HOW_OFTEN,
        True,
    ),
    ("q-primary-focus-2", _SCHOOL_DAY, FOCUS, "I like learning new things.", LIKE_ME, True),
    (
        "q-primary-confidence-1",
        _SCHOOL_DAY,
        CONFIDENCE,
        "Can you ask your teacher for help?",
        HOW_OFTEN,
        True,
    ),
    (
        "q-primary-stress-2",
        _SCHOOL_DAY,
        STRESS,
        "Do you get time to play and have fun?",
        HOW_OFTEN,
        True,
    ),
)

PRIMARY_QUESTIONS: tuple[BankQuestion, ...] = build_questions(_ROWS)

# Every primary tip list starts the same way, so a child hears where the ideas begin.
_TRY_THIS = "Try this:"

PRIMARY_TRAITS: dict[str, Trait] = {
    SLEEP: Trait(
        title="Feeling sleepy",
        copy="You said you often feel tired. Sleep helps your body and your brain to grow.",
        signs=(
            "Feeling sleepy in class",
            "Yawning a lot in the day",
            "Finding it hard to get up in the morning",
        ),
        tips_intro=_TRY_THIS,
        tips=(
            "Go to bed at the same time every night.",
            "Turn off the TV and games a while before bed.",
            "Have a calm time before bed, like a story.",
        ),
    ),
    MEMORY: Trait(
        title="Remembering things",
        copy="You said it can be hard to remember what you learn. Lots of children find that. "
        "Your brain gets better with practice.",
        signs=(
            "Forgetting what your teacher said",
            "Forgetting what you learned the day before",
        ),
        tips_intro=_TRY_THIS,
        tips=(
            "Tell someone at home one thing you learned today.",
            "Draw a picture of what you learned.",
            "Ask your teacher to say it again.",
        ),
    ),
    EXAM_ANXIETY: Trait(
        title="Worried about tests",
        copy="You said tests and quizzes can make you feel wobbly. That is OK. "
        "Lots of people feel like that.",
        signs=(
            "A funny feeling in your tummy before a test",
            "Forgetting things you know when a quiz starts",
        ),
        tips_intro=_TRY_THIS,
        tips=(
            "Take three slow, deep breaths.",
            "Tell a grown-up how you feel.",
            "Remember: a quiz helps you practise. It is fine to get things wrong.",
        ),
    ),
    FOCUS: Trait(
        title="Hard to keep listening",
        copy="You said it can be hard to listen and stay interested. "
        "Little breaks help your brain.",
        signs=(
            "Thinking about other things in class",
            "Finding it hard to get started",
        ),
        tips_intro=_TRY_THIS,
        tips=(
            "Look at the person who is talking.",
            "Do one small step at a time.",
            "Stretch and wiggle in a break, then try again.",
        ),
    ),
    ORGANIZATION: Trait(
        title="Finding your things",
        copy="You said it can be hard to find your things. A place for everything makes it easier.",
        signs=(
            "Losing your things",
            "Forgetting what to bring to school",
        ),
        tips_intro=_TRY_THIS,
        tips=(
            "Keep your things in the same place every day.",
            "Pack your bag the night before, with a grown-up.",
            "Make a picture list of what you need.",
        ),
    ),
    STRESS: Trait(
        title="Big worries",
        copy="You said worries can feel big. Talking about them can make them smaller.",
        signs=(
            "Worries that keep you awake",
            "A tummy ache or a headache when you are worried",
            "Not having time to play",
        ),
        tips_intro=_TRY_THIS,
        tips=(
            "Tell a grown-up you trust about your worries.",
            "Play something you enjoy every day.",
            "Run, jump or dance to shake the worry out.",
        ),
    ),
    CONFIDENCE: Trait(
        title="Asking for help",
        copy="You said it can be hard to ask for help. Asking is a brave thing to do.",
        signs=(
            "Staying quiet when you are stuck",
            "Thinking you are not good at things",
        ),
        tips_intro=_TRY_THIS,
        tips=(
            "Put your hand up when you are stuck.",
            "Say to yourself: I can't do it yet, but I am learning.",
            "Think of something new you can do now.",
        ),
    ),
}

PRIMARY_BALANCED_TRAIT = Trait(
    title="Ready to learn",
    copy="You said you sleep well, remember things and feel OK at school. Keep doing what you do.",
    signs=(
        "Feeling rested most days",
        "Remembering what you learn",
        "Asking for help when you need it",
    ),
    tips_intro=_TRY_THIS,
    tips=(
        "Keep going to bed at the same time.",
        "Keep asking questions.",
        "Share a good idea with a friend.",
    ),
)

# The areas in a child's words, for the summary sentence of the results.
PRIMARY_AREA_WORDS: dict[str, str] = {
    SLEEP: "sleep",
    MEMORY: "remembering",
    EXAM_ANXIETY: "feeling calm in tests",
    FOCUS: "listening",
    ORGANIZATION: "finding your things",
    STRESS: "worries",
    CONFIDENCE: "asking for help",
}
