"""Reads for the lesson page: the group's pupils, their cards' sessions and their progress."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Max
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from assessments.models import AssessmentAttempt, AttemptAnswer
from assessments.taking import first_page_to_resume, question_pages
from classes.models import SchoolGroup
from learners.models import Learner
from lessons.models import CardRefusal, CardSession, SignInWindow

State = AssessmentAttempt.State
_FINISHED = (State.SUBMITTING, State.SUBMIT_PENDING, State.SUBMITTED, State.COMPLETED)


@dataclass(frozen=True)
class RosterRow:
    """One pupil in the lesson: signed in or not, where, how far, and refused card uses."""

    learner: Learner
    session: CardSession | None  # the latest card session of this window
    signed_in_with_password: bool
    progress: str
    finished: bool
    refusals: int
    last_refusal_at: datetime | None

    @property
    def signed_in(self) -> bool:
        return self.session is not None and self.session.ended_at is None


# Offered when no lesson of the group has kept its minutes yet: a school lesson's hour.
DEFAULT_MINUTES = 60


def _pupils(group: SchoolGroup):
    """Return the group's learners now (no leaver), unordered."""
    return Learner.objects.filter(
        status=Learner.Status.ACTIVE,
        left_at__isnull=True,
        group_memberships__group=group,
        group_memberships__left_at__isnull=True,
    )


def group_pupils(group: SchoolGroup) -> list[Learner]:
    """Return the group's learners now, in list order, with their accounts (no leaver)."""
    return list(_pupils(group).select_related("user").order_by(*Learner.LIST_ORDER))


def board_counts(group: SchoolGroup, window: SignInWindow | None) -> tuple[int, int]:
    """Return (pupils signed in by card now, pupils in the group): counts, never who."""
    pupils = _pupils(group)
    if window is None:
        return 0, pupils.count()
    signed_in = (
        window.sessions.filter(ended_at__isnull=True, learner__in=pupils)
        .values("learner")
        .distinct()
        .count()
    )
    return signed_in, pupils.count()


def minutes_to_offer(group: SchoolGroup, window: SignInWindow | None, max_minutes: int) -> int:
    """Return the minutes the sign-in box shows: this lesson's choice, else the last lesson's."""
    if window is None or window.minutes is None:
        window = (
            SignInWindow.objects.filter(group=group, minutes__isnull=False)
            .order_by("-opened_at", "-pk")
            .first()
        )
    chosen = window.minutes if window is not None else DEFAULT_MINUTES
    return max(1, min(chosen, max_minutes))


def lesson_roster(window: SignInWindow) -> list[RosterRow]:
    """Return a row for each pupil of the window's group (a few queries, whatever its size)."""
    pupils = group_pupils(window.group)
    sessions: dict[int, CardSession] = {}
    for session in window.sessions.order_by("started_at", "pk"):
        sessions[session.learner_id] = session  # the latest wins
    refusals = {
        row["learner"]: row
        for row in CardRefusal.objects.filter(window=window)
        .values("learner")
        .annotate(count=Count("pk"), last=Max("at"))
    }
    progress = _progress(pupils)
    rows = []
    for pupil in pupils:
        last_login = pupil.user.last_login if pupil.user_id else None
        text, finished = progress.get(pupil.pk, (_("Not started"), False))
        refused = refusals.get(pupil.pk, {})
        rows.append(
            RosterRow(
                learner=pupil,
                session=sessions.get(pupil.pk),
                signed_in_with_password=pupil.pk not in sessions
                and last_login is not None
                and last_login >= window.opened_at,
                progress=text,
                finished=finished,
                refusals=refused.get("count", 0),
                last_refusal_at=refused.get("last"),
            )
        )
    return rows


def _progress(pupils: list[Learner]) -> dict[int, tuple[str, bool]]:
    """Return each pupil's latest assessment as (words, finished)."""
    latest: dict[int, AssessmentAttempt] = {}
    attempts = (
        AssessmentAttempt.objects.filter(learner__in=pupils)
        .defer("content")
        .order_by("learner_id", "-offered_at", "-pk")
    )
    by_id = {pupil.pk: pupil for pupil in pupils}
    for attempt in attempts:
        # Its layout (one question per page for the youngest) is read from its learner.
        attempt.learner = by_id[attempt.learner_id]
        latest.setdefault(attempt.learner_id, attempt)
    under_way = [a.pk for a in latest.values() if a.state == State.IN_PROGRESS]
    contents = dict(AssessmentAttempt.objects.filter(pk__in=under_way).values_list("pk", "content"))
    answers: dict[int, dict[str, str]] = {}
    for attempt_id, question_id, answer_id in AttemptAnswer.objects.filter(
        attempt_id__in=under_way
    ).values_list("attempt_id", "question_id", "answer_id"):
        answers.setdefault(attempt_id, {})[question_id] = answer_id
    progress = {}
    for learner_id, attempt in latest.items():
        if attempt.state in _FINISHED:
            progress[learner_id] = (_("Finished"), True)
        elif attempt.state == State.IN_PROGRESS:
            attempt.content = contents.get(attempt.pk, {})
            pages = question_pages(attempt)
            page = first_page_to_resume(attempt, answers.get(attempt.pk, {})) or len(pages)
            # Translators: how far a pupil is, e.g. "Page 2 of 5".
            progress[learner_id] = (
                _("Page %(page)d of %(pages)d") % {"page": page, "pages": len(pages)},
                False,
            )
        elif attempt.state == State.REJECTED:
            progress[learner_id] = (_("Needs staff: answers refused"), False)
        else:
            progress[learner_id] = (_("Not started"), False)
    return progress


def roster_context(window: SignInWindow | None) -> dict:
    """Return what the roster template shows: its rows and a one-line summary."""
    roster = lesson_roster(window) if window else []
    signed_in = sum(row.signed_in for row in roster)
    finished = sum(row.finished for row in roster)
    summary = (
        ngettext(
            "%(in)d of %(count)d pupil signed in by card, %(done)d finished.",
            "%(in)d of %(count)d pupils signed in by card, %(done)d finished.",
            len(roster),
        )
        % {"in": signed_in, "count": len(roster), "done": finished}
        if window
        else ""
    )
    return {"window": window, "roster": roster, "roster_summary": summary}
