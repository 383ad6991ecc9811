"""Result traits: their shape, and the texts for secondary and further education by area."""

from __future__ import annotations

from dataclasses import dataclass

from sandbox.questions import (
    CONFIDENCE,
    EXAM_ANXIETY,
    FOCUS,
    MEMORY,
    ORGANIZATION,
    SLEEP,
    STRESS,
)


@dataclass(frozen=True)
class Trait:
    """The texts shown for the learner's most pressing area (or for a balanced profile)."""

    title: str
    copy: str
    signs: tuple[str, ...]
    tips_intro: str
    tips: tuple[str, ...]
    link: tuple[str, str] | None = None  # (https URL, link text) added after the tips


TRAITS: dict[str, Trait] = {
    SLEEP: Trait(
        title="Running low on rest",
        copy=(
            "Your answers suggest that tiredness is getting in the way of learning. "
            "Good sleep helps you focus, remember and cope with pressure."
        ),
        signs=(
            "Waking up tired even after a full night in bed",
            "Finding it hard to concentrate later in the day",
            "Using a screen in bed until late",
        ),
        tips_intro="Small, steady changes to your evenings can make mornings easier.",
        tips=(
            "Go to bed and get up at about the same time every day, weekends included.",
            "Put screens away, or out of reach, half an hour before sleep.",
            "If worries keep you awake, write them down and leave them for tomorrow.",
        ),
        link=("https://www.nhs.uk/every-mind-matters/", "Every Mind Matters (NHS)"),
    ),
    MEMORY: Trait(
        title="Learning that does not stick yet",
        copy=(
            "Your answers suggest that what you learn fades quickly. "
            "How you revise matters more than how long you revise."
        ),
        signs=(
            "Forgetting a topic soon after the lesson",
            "Rereading notes without testing yourself",
            "Feeling you know something until you are asked about it",
        ),
        tips_intro="Memory grows when you make your brain fetch things back.",
        tips=(
            "Close your notes and write down everything you remember, then check.",
            "Turn each topic into a few flashcards or quiz questions.",
            "Come back to a topic after one day, one week and one month.",
        ),
    ),
    EXAM_ANXIETY: Trait(
        title="Tests feel bigger than they are",
        copy=(
            "Your answers suggest that worry about tests is holding you back. "
            "Some nerves are normal; the aim is to keep them at a size you can manage."
        ),
        signs=(
            "Your mind going blank in a test",
            "Feeling sick or shaky before a test",
            "Finding it hard to calm down once panic starts",
        ),
        tips_intro="You can practise staying calm just like you practise a subject.",
        tips=(
            "Breathe in for four counts and out for six, a few times, when panic starts.",
            "Practise with past papers under test conditions so the real thing feels familiar.",
            "In a test, skip a question that blocks you and come back to it later.",
        ),
    ),
    FOCUS: Trait(
        title="Hard to get going",
        copy=(
            "Your answers suggest that starting and staying on task is a challenge. "
            "Motivation often follows action rather than coming first."
        ),
        signs=(
            "Leaving work until the last minute",
            "Checking messages often while working",
            "Not seeing why a subject matters to you",
        ),
        tips_intro="Make the first step small and the distractions far away.",
        tips=(
            "Work in short blocks of twenty minutes with a five-minute break.",
            "Put your phone in another room while you work.",
            "Link each task to something you want, such as a course, a job or a hobby.",
        ),
    ),
    ORGANIZATION: Trait(
        title="Juggling too much at once",
        copy=(
            "Your answers suggest that keeping track of work and deadlines is difficult. "
            "A simple system frees your head for the learning itself."
        ),
        signs=(
            "Deadlines arriving as a surprise",
            "Losing notes or materials",
            "Handing in work late or unfinished",
        ),
        tips_intro="One place for deadlines and one place for notes is a strong start.",
        tips=(
            "Write every deadline in one planner, calendar or app as soon as you hear it.",
            "Split big pieces of work into steps, each with its own date.",
            "Spend five minutes at the end of each week tidying your notes and bag.",
        ),
    ),
    STRESS: Trait(
        title="Carrying a heavy load",
        copy=(
            "Your answers suggest that stress is building up. "
            "Stress shows in the body as well as the mind, and rest is part of the work."
        ),
        signs=(
            "Headaches or a tummy ache when there is a lot to do",
            "Feeling there is never enough time",
            "Dropping the things you enjoy",
        ),
        tips_intro="Looking after yourself helps you keep going when work piles up.",
        tips=(
            "Keep at least one thing you enjoy in every week, even in busy times.",
            "Talk to someone you trust about what is weighing on you.",
            "Move your body every day: a walk counts.",
        ),
        link=("https://www.nhs.uk/every-mind-matters/", "Every Mind Matters (NHS)"),
    ),
    CONFIDENCE: Trait(
        title="Doubting your own ability",
        copy=(
            "Your answers suggest that you underrate yourself. "
            "Ability grows with practice, and asking questions is part of learning."
        ),
        signs=(
            "Comparing yourself with others and coming off worse",
            "Staying quiet when you do not understand",
            "Thinking you are just not good at a subject",
        ),
        tips_intro="Confidence comes from noticing your own progress.",
        tips=(
            "Keep a list of things you can do now that you could not do a month ago.",
            "Ask one question in class or at work each week.",
            "Compare yourself with your past self, not with other people.",
        ),
    ),
}

BALANCED_TRAIT = Trait(
    title="Steady and balanced",
    copy=(
        "Your answers suggest that your study habits and wellbeing are in good shape. "
        "Keep doing what works for you."
    ),
    signs=(
        "Feeling rested most days",
        "Remembering what you learn",
        "Keeping on top of your work",
    ),
    tips_intro="A few habits help you stay in good shape when things get busy.",
    tips=(
        "Keep a regular sleep routine.",
        "Plan your week ahead.",
        "Share what works for you with a friend.",
    ),
)
