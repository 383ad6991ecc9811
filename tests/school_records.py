"""Two schools with one of everything a URL can name, for tests of scoping by school."""

from dataclasses import dataclass, field
from datetime import timedelta

from django.contrib.auth.models import User
from django.utils import timezone

from accounts.models import SignInLock, StaffRole
from assessments.models import AssessmentAttempt, AssessmentResult
from classes.models import SchoolGroup
from dashboard.cohort import cohort_refresh
from followups.models import FollowUp, FollowUpNote
from followups.services import followup_open_for_result
from imports.models import ImportJob
from learners.models import Learner
from lessons.models import CardSession, SignInCard, SignInWindow
from lessons.services import learner_card_print
from safeguarding.entries import entry_add_note
from safeguarding.models import Alert, ChronologyEntry
from schools.context import working_in
from schools.models import School
from tests.factories import (
    make_attempt,
    make_group,
    make_learner,
    make_result,
    make_staff,
    put_in_group,
)

State = AssessmentAttempt.State


@dataclass
class SchoolRecords:
    """One school's people and records, and the words that only its own people may read."""

    school: School
    dsl: User
    teacher: User
    admin: User
    learner: Learner
    group: SchoolGroup
    attempt: AssessmentAttempt  # completed, with results and a follow-up
    stuck: AssessmentAttempt  # waiting to be sent: on the operations page
    result: AssessmentResult
    follow_up: FollowUp
    alert: Alert
    card: SignInCard
    window: SignInWindow
    card_session: CardSession
    job: ImportJob
    lock: SignInLock
    entry: ChronologyEntry  # a lead's note in the learner's safeguarding chronology
    markers: list[str] = field(default_factory=list)


def school_records(
    school: School, *, tag: str, first: str, last: str, group: str, assessment_id: int
) -> SchoolRecords:
    """Fill a school with a learner in a class, their results, cards, an alert, a lock..."""
    now = timezone.now()
    with working_in(school.pk):  # every row made on the way (audit, cohort) is the school's
        learner = make_learner(f"{first.lower()}.{tag}", f"u-{tag}", school=school)
        Learner.objects.filter(pk=learner.pk).update(first_name=first, last_name=last)
        learner.refresh_from_db()
        group_made = make_group(group, school=school)
        put_in_group(group_made, learner)
        dsl = make_staff(f"{tag}.dsl", role=StaffRole.DSL, school=school)
        dsl.email = f"{tag}.dsl@school.example"
        dsl.save(update_fields=["email"])
        teacher = make_staff(
            f"{tag}.teacher", role=StaffRole.TEACHER, school=school, groups=[group_made]
        )
        admin = make_staff(f"{tag}.admin", role=StaffRole.ADMIN, school=school)

        attempt = make_attempt(learner, assessment_id=assessment_id, state=State.SUBMITTED)
        result = make_result(attempt)
        AssessmentAttempt.objects.filter(pk=attempt.pk).update(completed_at=now)
        attempt.refresh_from_db()
        follow_up = followup_open_for_result(result=result)
        FollowUpNote.objects.create(
            follow_up=follow_up, author_username=dsl.username, text=f"{tag} private note"
        )
        stuck = make_attempt(learner, assessment_id=assessment_id + 1, state=State.SUBMIT_PENDING)
        cohort_refresh(learner_ids=[learner.pk])
        alert = Alert.objects.create(
            kind=Alert.Kind.ASKED,
            reason=Alert.Reason.ASKED,
            learner=learner,
            school=school,
            raised_at=now,
            escalate_at=now + timedelta(minutes=30),
        )
        entry = entry_add_note(learner=learner, by=dsl, text=f"{tag} chronology note")
        learner_card_print(learner=learner, group_name=group, printed_by=None, address=None)
        card = SignInCard.objects.get(learner=learner, voided_at__isnull=True)
        window = SignInWindow.objects.create(
            group=group_made, school=school, closes_at=now + timedelta(minutes=30)
        )
        card_session = CardSession.objects.create(card=card, learner=learner, window=window)
        job = ImportJob.objects.create(
            filename=f"{tag}-roster.csv",
            state=ImportJob.State.FINISHED,
            created_at=now,
            school=school,
        )
        lock = SignInLock.objects.create(
            user=learner.user,
            kind=SignInLock.Kind.ACCOUNT,
            scope_ref=f"account:{learner.pk}",
            locked_until=now + timedelta(minutes=15),
            school=school,
        )
    return SchoolRecords(
        school=school,
        dsl=dsl,
        teacher=teacher,
        admin=admin,
        learner=learner,
        group=group_made,
        attempt=attempt,
        stuck=stuck,
        result=result,
        follow_up=follow_up,
        alert=alert,
        card=card,
        window=window,
        card_session=card_session,
        job=job,
        lock=lock,
        entry=entry,
        # What nobody outside the school may read: the learner's names, their class, the
        # school's staff, its import's file and a note on its follow-up.
        markers=[
            learner.username,
            first,
            last,
            group,
            teacher.username,
            admin.username,
            dsl.username,
            job.filename,
            f"{tag} private note",
            f"{tag} chronology note",
        ],
    )
