"""The shape of the taking flow, derived from an attempt's stored content (no upstream calls)."""

from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import connection
from django.utils.translation import gettext

from assessments.child_words import PRIMARY, SECONDARY, wording_for
from assessments.models import (
    AssessmentAttempt,
    AssessmentResult,
    AttemptAnswer,
    version_of_content,
)
from partner_api import Answer, Question
from schools.models import PartnerSettings

# The spec's level code of primary pupils (ages 4 to 11), as learners.models.Level names it.
PRIMARY_LEVEL = "LOA_PARTNER_LEVEL3"


@dataclass(frozen=True)
class PageQuestion:
    """A question as a page shows it: with its position in the whole assessment."""

    # Numbers the question's form field: unlike the upstream's id, it is short and safe in
    # a name, an HTML id and a URL.
    position: int
    question: Question


@dataclass(frozen=True)
class QuestionPage:
    """One page of the flow: the questions of one topic Group, in DisplayOrder."""

    number: int
    group: str
    questions: tuple[PageQuestion, ...]


@dataclass(frozen=True)
class PageLayout:
    """How a learner's question pages look: for the youngest, one question at a time."""

    primary: bool = False
    one_per_screen: bool = False
    # Read each question aloud as it appears (the page's script; its buttons are always there).
    read_aloud: bool = False
    # The words of the pages around the questions (child_words): of the same level as the rest.
    wording: str = SECONDARY


def attempt_level(level: str, learner_level: str) -> str:
    """Return the level an attempt is shown at: its assessment's, else its learner's.

    The one rule for an attempt's pages: their layout and their words (primary or not) both
    follow it, so a secondary learner given a primary assessment reads it as a primary pupil.
    """
    return level or learner_level


def one_per_screen_now(level: str, school_id: int) -> bool:
    """Return whether an attempt whose content is stored now shows one question a screen."""
    return level == PRIMARY_LEVEL and not PartnerSettings.of(school_id).primary_questions_grouped


def page_layout(level: str, school_id: int, one_per_screen: bool | None = None) -> PageLayout:
    """Return the layout of an attempt's pages at this level (settings read for primary only).

    `one_per_screen` is the attempt's own, fixed when its content was stored; None (attempts
    stored before it was kept) decides from the school's setting now.
    """
    # Only a primary attempt reads the school's settings (from the row cache): every other
    # question page view stays at the one query of its snapshot.
    if level != PRIMARY_LEVEL:
        return PageLayout(one_per_screen=bool(one_per_screen), wording=wording_for(level))
    settings = PartnerSettings.of(school_id)
    if one_per_screen is None:
        one_per_screen = not settings.primary_questions_grouped
    return PageLayout(
        primary=True,
        one_per_screen=one_per_screen,
        read_aloud=not settings.primary_read_aloud_off,
        wording=PRIMARY,
    )


def attempt_layout(attempt: AssessmentAttempt) -> PageLayout:
    """Return the layout of the attempt's pages: its assessment's level, else its learner's."""
    learner = attempt.learner
    level = attempt_level(attempt.level, learner.level)
    return page_layout(level, learner.school_id, attempt.one_per_screen)


def question_pages(
    attempt: AssessmentAttempt, layout: PageLayout | None = None
) -> list[QuestionPage]:
    """Split the stored questions into pages: one per Group, or one per question for the youngest.

    Every caller that numbers pages goes through here, so the resume point, the autosave's page,
    the check page's Change links and the page links agree on the attempt's layout.
    """
    if layout is None:
        layout = attempt_layout(attempt)
    groups: dict[str, list[PageQuestion]] = {}
    # A page always has a heading (callers that cache pages key them by language).
    untitled = gettext("Questions")
    if layout.one_per_screen:
        return [
            QuestionPage(
                number=position,
                group=question.group.strip() or untitled,
                questions=(PageQuestion(position, question),),
            )
            for position, question in enumerate(attempt.questions, start=1)
        ]
    for position, question in enumerate(attempt.questions, start=1):
        group = question.group.strip() or untitled
        groups.setdefault(group, []).append(PageQuestion(position, question))
    return [
        QuestionPage(number=number, group=group, questions=tuple(questions))
        for number, (group, questions) in enumerate(groups.items(), start=1)
    ]


@dataclass(frozen=True)
class AttemptSnapshot:
    """What a question page needs of an attempt, read without its content."""

    pk: int
    state: str
    content_version: str  # as AssessmentAttempt.content_version
    answers: dict[str, str]
    level: str = ""  # the assessment's level (blank: the learner's)
    one_per_screen: bool | None = None  # as AssessmentAttempt.one_per_screen

    @property
    def is_open(self) -> bool:
        return self.state in AssessmentAttempt.OPEN_STATES


def attempt_snapshot(*, learner, assessment_id: int) -> AttemptSnapshot | None:
    """Return the learner's attempt's state, level, layout, content version and answers at once."""
    # Plain SQL: this runs on every question page view, where building the same query with
    # the ORM costs more than the rest of the page's own work (benchmarked: 0.5 ms of CPU).
    quote = connection.ops.quote_name
    attempts = quote(AssessmentAttempt._meta.db_table)
    answers = quote(AttemptAnswer._meta.db_table)
    # Only the models' own table names are formatted in; the values are parameters.
    sql = (
        "SELECT a.id, a.state, a.offered_at, a.state_changed_at, a.session, a.level,"  # noqa: S608
        " a.one_per_screen,"
        f" x.question_id, x.answer_id FROM {attempts} a LEFT JOIN {answers} x"
        f" ON x.attempt_id = a.id WHERE a.learner_id = %s AND a.assessment_id = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [learner.pk, assessment_id])
        rows = cursor.fetchall()
    if not rows:
        return None
    pk, state, offered_at, state_changed_at, session, level, one_per_screen = rows[0][:7]
    return AttemptSnapshot(
        pk=pk,
        state=state,
        content_version=version_of_content(offered_at, state_changed_at, session),
        level=level,
        # SQLite hands back a boolean column as 0 or 1.
        one_per_screen=None if one_per_screen is None else bool(one_per_screen),
        answers={question: answer for *_, question, answer in rows if question is not None},
    )


@dataclass(frozen=True)
class ResultsSnapshot:
    """What the learner's results page shows of an attempt, and which result it has."""

    assessment_id: int
    state: str
    title: str
    last_error: str
    result_pk: int | None
    # Part of the rendered result's cache key: a result is stored once and never changed.
    result_version: str
    # When the learner's results arrived: the day they read as "finished".
    finished_at: datetime | None = None
    # Whether the upstream has offered the learner another assessment that is known here (an
    # attempt still to start): the page may offer it without asking the upstream.
    another_offered: bool = False

    @property
    def is_open(self) -> bool:
        return self.state in AssessmentAttempt.OPEN_STATES

    @property
    def waiting(self) -> bool:
        """Return whether the answers are on their way and no results have arrived yet."""
        return self.result_pk is None and self.state in AssessmentAttempt.WAITING_STATES


def results_snapshot(*, learner, assessment_id: int) -> ResultsSnapshot | None:
    """Return the learner's attempt as its results page needs it, in one query."""
    # Plain SQL for the same reason as attempt_snapshot: the ORM's select_related query
    # costs more CPU than the rest of the page's own work.
    quote = connection.ops.quote_name
    attempts = quote(AssessmentAttempt._meta.db_table)
    results = quote(AssessmentResult._meta.db_table)
    # Only the models' own table names are formatted in; the values are parameters.
    sql = (
        "SELECT a.state, a.title, a.last_error, r.id, r.received_at, a.completed_at,"  # noqa: S608
        f" EXISTS (SELECT 1 FROM {attempts} o WHERE o.learner_id = a.learner_id"
        " AND o.state = %s)"
        f" FROM {attempts} a LEFT JOIN {results} r ON r.attempt_id = a.id"
        f" WHERE a.learner_id = %s AND a.assessment_id = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [AssessmentAttempt.State.AVAILABLE.value, learner.pk, assessment_id])
        row = cursor.fetchone()
    if row is None:
        return None
    state, title, last_error, result_pk, received_at, completed_at, another_offered = row
    return ResultsSnapshot(
        assessment_id=assessment_id,
        state=state,
        title=title,
        last_error=last_error,
        result_pk=result_pk,
        result_version=str(received_at),
        finished_at=_aware(completed_at or received_at),
        another_offered=bool(another_offered),
    )


def _aware(moment: datetime | None) -> datetime | None:
    """Return a time read by plain SQL with its zone: SQLite's come without one (UTC)."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def saved_answers(attempt: AssessmentAttempt) -> dict[str, str]:
    """Return the learner's saved choices as question id -> answer id."""
    return dict(attempt.answers.values_list("question_id", "answer_id"))


def chosen_answer(question: Question, answers: dict[str, str]) -> Answer | None:
    """Return the question's answer chosen in `answers` (question id -> answer id), if valid."""
    chosen = answers.get(question.id)
    return next((answer for answer in question.answers if answer.id == chosen), None)


def unanswered_questions(attempt: AssessmentAttempt, answers: dict[str, str]) -> list[Question]:
    """Return the questions without a valid saved answer, in display order."""
    return [question for question in attempt.questions if chosen_answer(question, answers) is None]


def first_page_to_resume(
    attempt: AssessmentAttempt, answers: dict[str, str], layout: PageLayout | None = None
) -> int | None:
    """Return the number of the first page with an unanswered question, or None if all done."""
    missing = {question.id for question in unanswered_questions(attempt, answers)}
    for page in question_pages(attempt, layout):
        if any(entry.question.id in missing for entry in page.questions):
            return page.number
    return None


@dataclass(frozen=True)
class CheckRow:
    """One row of the check-answers page: a question and the answer chosen (if any)."""

    position: int
    question: Question
    answer: Answer | None


@dataclass(frozen=True)
class CheckSection:
    """One page's rows on the check-answers page."""

    page: QuestionPage
    rows: tuple[CheckRow, ...]


def check_answers_sections(attempt: AssessmentAttempt) -> list[CheckSection]:
    """Return each page with its questions and the answer chosen for each (or None)."""
    answers = saved_answers(attempt)
    return [
        CheckSection(
            page=page,
            rows=tuple(
                CheckRow(entry.position, entry.question, chosen_answer(entry.question, answers))
                for entry in page.questions
            ),
        )
        for page in question_pages(attempt)
    ]


def current_attempt(attempts: list[AssessmentAttempt]) -> AssessmentAttempt | None:
    """Return the attempt the learner's page leads with: unfinished first, then offered."""
    unfinished = (a for a in attempts if a.state in AssessmentAttempt.UNFINISHED_STATES)
    return next(unfinished, None) or next((a for a in attempts if a.is_open), None)
