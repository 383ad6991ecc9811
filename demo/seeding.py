"""A demo cohort for `make run`, seeded through the upstream by the portal's own services.

Every learner is registered, offered, answered and submitted over real HTTP exactly as the
pages do it; only the dates are moved back afterwards (locally), so that the dashboard's date
filters and the follow-up queue's due dates have a history to show.
"""

import random
import secrets
import socket
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.utils import timezone

from accounts.access import STAFF_GROUP
from assessments.delivery import attempt_submit
from assessments.models import AssessmentAttempt, AssessmentResult
from assessments.services import attempt_save_answers, attempt_start
from classes.models import SchoolGroup
from classes.services import group_create, group_learners_add
from dashboard.cohort import cohort_refresh
from demo.trust import DemoTrust, demo_colleague_roles, demo_schools, demo_trust_staff
from followups.models import FollowUp, FollowUpHistory, FollowUpNote
from followups.services import followup_due_date, followup_update
from learners.models import Learner, Level
from learners.services import RegistrationFailed, learner_register
from safeguarding.entries import entry_add_action
from safeguarding.forms import SPOKE_WITH_THE_PUPIL
from safeguarding.models import Alert, ChronologyEntry
from safeguarding.services import escalation_deadline
from schools.context import working_in
from schools.models import PartnerSettings

State = AssessmentAttempt.State

COLLEAGUE_USERNAME = "demo-counsellor"
# The deputy lead needs an address, or escalated alerts reach no deputy in `make run` (they are
# printed by the delivery worker there: nothing is sent).
COLLEAGUE_EMAIL = "demo-counsellor@dsl.example"
HISTORY_DAYS = 60
# A routine item older than this is usually closed by now, as a school's would be: its records
# are then kept the retention period from then, not held (privacy.selectors.hold_of).
SETTLED_AFTER_DAYS = 21

FIRST_NAMES = (
    "Amira", "Ben", "Chloe", "Dev", "Ella", "Finn", "Grace", "Hamza", "Isla", "Jack", "Kiran",
    "Leah", "Mohammed", "Nia", "Oscar", "Priya", "Quinn", "Ruby", "Sami", "Tara", "Umar",
    "Vera", "Wei", "Yusuf", "Zara", "Aaron", "Bella", "Callum", "Daisy", "Ethan", "Freya",
    "George", "Hana", "Ivan", "Jade", "Kai", "Lola", "Max", "Noor", "Olly",
)  # fmt: skip
LAST_NAMES = (
    "Khan", "Smith", "Okafor", "Patel", "Jones", "Murphy", "Williams", "Ali", "Brown", "Taylor",
    "Nowak", "Evans", "Hussain", "Davies", "Wilson", "Shah", "Roberts", "Chen", "Walker",
    "Hughes", "Begum", "Green", "Lewis", "Ahmed", "Clarke", "Wood", "Mensah", "Hall", "Young",
    "King", "Wright", "Scott", "Adams", "Baker", "Hill", "Ward", "Morris", "Cook", "Bell",
    "Kaur",
)  # fmt: skip
# Ages (in years) that fit each level, so the records look like a real college's.
AGES = {Level.PRIMARY: (8, 11), Level.SECONDARY: (11, 16), Level.FURTHER_EDUCATION: (16, 19)}
# Wellbeing ranges that give, against the sandbox, LOW, MODERATE and HIGH risk levels.
WELLBEING_TIERS = ((0.75, 1.0), (0.4, 0.65), (0.05, 0.35))
NOTES = {
    FollowUp.Status.CONTACTED: (
        "Spoke with the learner after class; agreed to check in again next week.",
        "Emailed the learner and their tutor; waiting for a reply.",
    ),
    FollowUp.Status.REFERRED: (
        "Referred to the student support team with the learner's agreement.",
        "Booked a first appointment with the wellbeing service.",
    ),
    FollowUp.Status.RESOLVED: ("Follow-up meeting went well: no further action needed.",),
}


@dataclass
class SeedSummary:
    """What a seeding run made, for the command to print."""

    learners: Counter = field(default_factory=Counter)  # per level label
    completed: int = 0
    in_progress: int = 0
    not_started: int = 0
    follow_ups: Counter = field(default_factory=Counter)  # per status label
    assigned: int = 0
    failures: list[str] = field(default_factory=list)
    usernames: list[str] = field(default_factory=list)


def wait_for_upstream(*, timeout: float, base_url: str | None = None) -> bool:
    """Return once the upstream's port accepts connections, or False after `timeout` seconds."""
    # A bare TCP check, not an API call: early calls would fail, be recorded on the operations
    # page and open the circuit breaker before the sandbox had even started.
    parts = urlsplit(base_url or settings.PARTNER_API_BASE_URL)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((parts.hostname, port), timeout=1):
                return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.25)


def demo_staff_members(*, demo_staff: AbstractBaseUser, trust: DemoTrust) -> list[AbstractBaseUser]:
    """Return the demo staff member and a colleague (who cannot sign in) to share items with."""
    colleague, created = get_user_model().objects.get_or_create(
        username=COLLEAGUE_USERNAME, defaults={"first_name": "Dana", "last_name": "Counsellor"}
    )
    if created:
        colleague.set_unusable_password()
    if colleague.email != COLLEAGUE_EMAIL:  # mends a demo seeded before the deputy had one
        colleague.email = COLLEAGUE_EMAIL
    colleague.save()
    colleague.groups.add(Group.objects.get_or_create(name=STAFF_GROUP)[0])
    # A deputy safeguarding lead: someone follow-ups can be handed to.
    demo_colleague_roles(colleague, trust)
    return [demo_staff, colleague]


# One group per level, as a school or college would name them (the primary's in the primary).
DEMO_GROUPS = {
    Level.PRIMARY: ("Year 5 Oak", "class", "Mr Lewis, your class teacher"),
    Level.SECONDARY: ("10B", "class", "Ms Ahmed, your form tutor"),
    Level.FURTHER_EDUCATION: ("FE tutor group 1", "tutor", ""),
}
# Who a pupil can ask for at each school: "I want to talk to someone" offers them by name.
DEMO_SCHOOL_CONTACTS = {
    Level.PRIMARY: "Mrs Okafor, who keeps children safe, in the office",
    Level.SECONDARY: "Ms Morgan, our safeguarding lead, in room 12",
}


def _demo_groups_seed(usernames: list[str], *, staff: AbstractBaseUser, trust: DemoTrust) -> None:
    """Put the demo learners in a group of their level, so the class pages show something."""
    for level, contact in DEMO_SCHOOL_CONTACTS.items():
        settings = PartnerSettings.load(trust.school_for(level).pk)
        if not settings.school_contact:
            settings.school_contact = contact
            settings.save()
    for level, (name, kind, contact) in DEMO_GROUPS.items():
        school = trust.school_for(level)
        with working_in(school.pk):
            group = SchoolGroup.objects.filter(name=name, school=school).first() or group_create(
                name=name, level=level, kind=kind, contact=contact, created_by=staff, address=None
            )
        group_learners_add(
            group=group,
            learners=Learner.objects.filter(username__in=usernames, level=level),
            added_by=staff,
            address=None,
        )


def demo_cohort_seed(
    *, staff: AbstractBaseUser, count: int, seed: int = 2026, password: str | None = None
) -> tuple[SeedSummary, str]:
    """Register and assess `count` demo learners upstream; return a summary and their password.

    Primary pupils go to the trust's primary school, the others to its secondary.
    """
    rng = random.Random(seed)
    password = password or f"Demo-{secrets.token_urlsafe(9)}"
    trust = demo_schools()
    demo_trust_staff(trust)  # each school's lead, before anyone is assessed
    people = demo_staff_members(demo_staff=staff, trust=trust)
    summary = SeedSummary()
    now = timezone.now()
    levels = [Level.FURTHER_EDUCATION, Level.SECONDARY, Level.PRIMARY]
    for number in range(count):
        level = levels[number % 3]
        first = FIRST_NAMES[number % len(FIRST_NAMES)]
        last = LAST_NAMES[(number * 7) % len(LAST_NAMES)]
        registered_at = now - timedelta(days=rng.uniform(2, HISTORY_DAYS), hours=rng.uniform(0, 8))
        with working_in(trust.school_for(level).pk):
            try:
                learner = _register(first, last, level, password, staff, rng, registered_at)
            except RegistrationFailed as failure:
                summary.failures.append(f"{first} {last}: {failure.message}")
                continue
            summary.learners[Level(level).label] += 1
            summary.usernames.append(learner.username)
            _take_assessments(learner, number, rng, registered_at, now, summary)
    _work_on_follow_ups(people, rng, now, summary)
    _acknowledge_alerts(people[0], rng, now, summary)
    _demo_groups_seed(summary.usernames, staff=staff, trust=trust)
    # The dashboard's read model counted each result when it arrived, at seeding time; count
    # them again at the dates the demo moved them back to.
    cohort_refresh(
        learner_ids=Learner.objects.filter(username__in=summary.usernames).values_list(
            "pk", flat=True
        )
    )
    return summary, password


def _register(first, last, level, password, staff, rng, registered_at) -> Learner:
    """Register one learner, choosing another username if the upstream already has it."""
    low, high = AGES[level]
    dob = date.today() - timedelta(days=int(rng.uniform(low, high) * 365.25))
    base = f"{first}.{last}".lower()
    for suffix in ("", "2", "3", "4", "5"):
        try:
            learner = learner_register(
                username=base + suffix,
                password=password,
                dob=dob,
                registered_by=staff,
                email=f"{base}{suffix}@example.org",
                first_name=first,
                last_name=last,
                level=level,
            )
        except RegistrationFailed as failure:
            # The sandbox keeps its learners across runs: a fresh portal may meet old names.
            if failure.field == "username" and suffix != "5":
                continue
            raise
        Learner.objects.filter(pk=learner.pk).update(registered_at=registered_at)
        return learner
    raise AssertionError("unreachable")


def _take_assessments(learner, number: int, rng, registered_at, now, summary) -> None:
    """Give the learner no attempt, one in progress, or one or two completed ones."""
    # A fixed mix rather than dice, so even a small cohort has every kind of learner.
    if number % 13 == 5:
        summary.not_started += 1
        return
    # How well this learner is doing: 1.0 answers with no sign of need, 0.0 the opposite.
    low, high = WELLBEING_TIERS[(number // 3) % len(WELLBEING_TIERS)]
    wellbeing = rng.uniform(low, high)
    started = registered_at + timedelta(days=rng.uniform(0.2, 6))
    started = min(started, now - timedelta(hours=2))
    attempt = attempt_start(learner=learner)
    if number % 8 == 3:
        choices = _choose_answers(attempt, wellbeing, rng)
        half = dict(list(choices.items())[: len(choices) // 2])
        attempt_save_answers(attempt=attempt, choices=half)
        _backdate(attempt, started, completed=None)
        summary.in_progress += 1
        return
    _complete(attempt, wellbeing, rng, started, now)
    summary.completed += 1
    # About a quarter take a second assessment some weeks later: their trend has two points.
    second_start = started + timedelta(days=rng.uniform(14, 30))
    if number % 4 == 1 and second_start < now - timedelta(hours=2):
        improved = min(1.0, wellbeing + rng.uniform(-0.1, 0.3))
        _complete(attempt_start(learner=learner), improved, rng, second_start, now)
        summary.completed += 1


def _complete(attempt, wellbeing: float, rng, started: datetime, now: datetime) -> None:
    """Answer every question, send the answers and date everything back to `started`."""
    attempt_save_answers(attempt=attempt, choices=_choose_answers(attempt, wellbeing, rng))
    attempt_submit(attempt=attempt)
    completed = min(started + timedelta(minutes=rng.uniform(6, 25)), now)
    _backdate(attempt, started, completed=completed)


def _choose_answers(attempt: AssessmentAttempt, wellbeing: float, rng) -> dict[str, str]:
    """Pick an answer per question, near the learner's wellbeing where the score is known."""
    scores = _sandbox_answer_scores()
    choices = {}
    for question in attempt.questions:
        answers = question.answers
        known = [a for a in answers if a.id in scores]
        if len(known) < len(answers):  # not the sandbox's bank: any answer will do
            choices[question.id] = rng.choice(answers).id
            continue
        # Scales differ in length (a primary pupil's may have three answers): aim within each.
        top = max(scores[a.id] for a in answers)
        target = wellbeing * top + rng.gauss(0, 0.8 * top / 3)
        best = min(answers, key=lambda a: abs(scores[a.id] - target))
        choices[question.id] = best.id
    return choices


def _sandbox_answer_scores() -> dict[str, int]:
    """Return the sandbox banks' score of each answer id (the demo runs against the sandbox)."""
    from sandbox.bank import LEVELS, questions_for_level

    # Every level's bank: primary pupils answer their own, with ids of its own.
    return {
        answer.id: answer.score
        for level in LEVELS
        for question in questions_for_level(level)
        for answer in question.answers
    }


def _backdate(attempt: AssessmentAttempt, started: datetime, *, completed: datetime | None):
    """Move an attempt, its results and its follow-up back to when the demo says they happened."""
    fields = {"offered_at": started, "started_at": started, "last_saved_at": completed or started}
    if completed:
        fields |= {"submitted_at": completed, "completed_at": completed,
                   "state_changed_at": completed}  # fmt: skip
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(**fields)
    if completed:
        AssessmentResult.objects.filter(attempt=attempt).update(received_at=completed)
        FollowUp.objects.filter(attempt=attempt).update(
            created_at=completed,
            updated_at=completed,
            due_date=followup_due_date(opened_at=completed),
        )
        Alert.objects.filter(attempt=attempt).update(
            raised_at=completed,
            escalate_at=escalation_deadline(
                completed, PartnerSettings.of(attempt.learner.school_id)
            ),
        )


def _acknowledge_alerts(lead, rng, now: datetime, summary: SeedSummary) -> None:
    """Acknowledge the demo's older alerts after a plausible wait; leave the last day's waiting."""
    alerts = Alert.objects.filter(
        learner__username__in=summary.usernames,
        acknowledged_at__isnull=True,
        raised_at__lt=now - timedelta(days=1),
    )
    for alert in alerts:
        acknowledged_at = alert.raised_at + timedelta(minutes=rng.uniform(3, 75))
        category = rng.choice([Alert.Category.WELLBEING, Alert.Category.ATTENDANCE])
        Alert.objects.filter(pk=alert.pk).update(
            acknowledged_at=acknowledged_at,
            acknowledged_by=lead,
            acknowledged_by_username=lead.get_username(),
            category=category,
        )
        # What the lead did, as the chronology shows it (dated when they took it on).
        alert.category = category
        entry = entry_add_action(alert=alert, by=lead, action=str(SPOKE_WITH_THE_PUPIL))
        ChronologyEntry.objects.filter(pk=entry.pk).update(created_at=acknowledged_at)


def _work_on_follow_ups(people, rng, now: datetime, summary: SeedSummary) -> None:
    """Assign some items, move some on with notes, as staff would have over the weeks."""
    demo_staff, colleague = people
    items = FollowUp.objects.filter(learner__username__in=summary.usernames)
    for item in items.order_by("created_at"):
        roll = rng.random()
        assignee = demo_staff if roll < 0.45 else colleague if roll < 0.65 else None
        status = rng.choices(list(FollowUp.Status), weights=[5, 3, 2, 1])[0]
        settled = now - item.created_at > timedelta(days=SETTLED_AFTER_DAYS)
        if not item.priority and settled and rng.random() < 0.8:
            status, assignee = FollowUp.Status.RESOLVED, assignee or demo_staff
        if assignee is None:
            status = FollowUp.Status.NEW  # nobody has picked it up yet
        note = rng.choice(NOTES[status]) if status in NOTES else ""
        if assignee is not None or note:
            followup_update(
                follow_up=item,
                changed_by=assignee or demo_staff,
                status=status,
                assignee=assignee,
                due_date=item.due_date,
                note=note,
            )
            when = min(item.created_at + timedelta(days=rng.uniform(0.5, 5)), now)
            resolved_at = when if status == FollowUp.Status.RESOLVED else None
            FollowUp.objects.filter(pk=item.pk).update(updated_at=when, resolved_at=resolved_at)
            FollowUpNote.objects.filter(follow_up=item).update(created_at=when)
            FollowUpHistory.objects.filter(follow_up=item).update(created_at=when)
            summary.assigned += assignee is not None
        summary.follow_ups[FollowUp.Status(status).label] += 1
