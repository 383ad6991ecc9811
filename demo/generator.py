"""A local, generated cohort for measuring the portal at scale; never sent upstream.

Rows get explicit primary keys and are written straight to their tables: PostgreSQL's COPY
there, executemany elsewhere. That is what makes 100,000 learners and 300,000 attempts take a
minute or two instead of an hour, and it keeps the past dates that `auto_now_add` fields would
otherwise overwrite. Every generated learner has an `upstream_user_id` starting with
GENERATED_PREFIX, which is how `cohort_clear` finds them again.
"""

import random
import secrets
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import IO

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.core.management.color import no_style
from django.db import connection, models, transaction
from django.db.models import Max
from django.utils import timezone

from assessments.models import AssessmentAttempt, AssessmentResult, FocusArea
from learners.models import Learner, Level

# The sandbox is this project's stand-in upstream: its labels are the ones real results carry.
from sandbox.bank import ASSESSMENT_VERSION, ASSESSMENT_VERSION_DECIMAL, FOCUS_AREAS, LEVELS
from sandbox.scoring import description_html, risk_level, traits_for_level
from schools.models import first_school_id

GENERATED_PREFIX = "gen-"

FIRST_NAMES = (
    "Amira", "Oliver", "Chloe", "Mohammed", "Grace", "Jack", "Aisha", "Harry", "Zara", "Noah",
    "Emily", "Leo", "Sofia", "Yusuf", "Isla", "Charlie", "Priya", "George", "Maya", "Jacob",
    "Fatima", "Oscar", "Ella", "Arjun", "Lily", "Thomas", "Hannah", "Ibrahim", "Ava", "Daniel",
    "Mia", "Kwame", "Freya", "Ethan", "Nadia", "Samuel", "Ruby", "Tomasz", "Layla", "Finn",
    "Anya", "Joseph", "Erin", "Dev", "Poppy", "Lucas", "Niamh", "Adam", "Keira", "Reuben",
)  # fmt: skip
LAST_NAMES = (
    "Smith", "Jones", "Khan", "Williams", "Patel", "Brown", "Taylor", "Ahmed", "Davies",
    "Evans", "Wilson", "Thomas", "Roberts", "Ali", "Johnson", "Walker", "Wright", "Robinson",
    "Thompson", "White", "Hughes", "Edwards", "Green", "Hussain", "Hall", "Wood", "Harris",
    "Lewis", "Martin", "Jackson", "Clarke", "Clark", "Turner", "Hill", "Scott", "Cooper",
    "Morris", "Ward", "Moore", "King", "Watson", "Baker", "Harrison", "Morgan", "Nowak",
    "Okafor", "Mensah", "Kowalski", "Singh", "O'Brien",
)  # fmt: skip

# Levels and the ages learners start at in each (years, inclusive range).
LEVEL_MIX = ((Level.PRIMARY, 0.3, (5, 10)), (Level.SECONDARY, 0.4, (11, 15)),
             (Level.FURTHER_EDUCATION, 0.3, (16, 19)))  # fmt: skip
REGISTRATION_SPAN = timedelta(days=730)
WITH_EMAIL = 0.8

State = AssessmentAttempt.State
# Share of all attempts in each state. Open and waiting states go to a learner's latest
# attempt only (a learner has one assessment on the go); earlier ones are finished.
STATE_MIX = {
    State.COMPLETED: 0.78,
    State.REJECTED: 0.04,
    State.IN_PROGRESS: 0.07,
    State.AVAILABLE: 0.04,
    State.SUBMIT_PENDING: 0.03,
    State.SUBMITTED: 0.03,
    State.SUBMITTING: 0.01,
}
FINISHED = (State.COMPLETED, State.REJECTED)
FLAGGED_SHARE = 0.3  # results with at least one focus area needing help
FLAGGED_COUNT_WEIGHTS = (5, 3, 2, 1)  # 1, 2, 3 or 4 areas flagged

FollowUpStatusMix = tuple[tuple[str, float], ...]
# A resolved item was resolved up to this long after it opened (never after now); a priority
# item's alert acknowledged within the default 30 minutes, so none escalated. Both spread by
# the row's id, not the random generator, so a seed makes the same cohort as it always did.
RESOLVED_WITHIN_DAYS = 21
ACKNOWLEDGED_WITHIN_MINUTES = 25
ESCALATE_AFTER = timedelta(minutes=30)
GENERATED_LEAD = f"{GENERATED_PREFIX}lead"


@dataclass
class _Ids:
    """The next primary key of each table written, taken above what is already there."""

    next: dict[type[models.Model], int]

    def take(self, model: type[models.Model]) -> int:
        value = self.next[model]
        self.next[model] = value + 1
        return value


class _TableWriter:
    """Write rows of explicit column values to one model's table, as fast as the backend can."""

    # Values the database driver cannot take as Python objects on every backend.
    PREPARED_TYPES = frozenset({"DateTimeField", "DateField", "DecimalField", "JSONField"})

    def __init__(self, model: type[models.Model], columns: Sequence[str]):
        self.model = model
        fields = [model._meta.get_field(name) for name in columns]
        self.columns = [field.column for field in fields]
        self.prepare = [
            (index, field)
            for index, field in enumerate(fields)
            if field.get_internal_type() in self.PREPARED_TYPES
        ]

    def write(self, rows: list[tuple]) -> None:
        if not rows:
            return
        if self.prepare:
            rows = [self._prepared(row) for row in rows]
        quote = connection.ops.quote_name
        table = quote(self.model._meta.db_table)
        columns = ", ".join(quote(column) for column in self.columns)
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
            else:
                marks = ", ".join(["%s"] * len(self.columns))
                cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)  # noqa: S608

    def _prepared(self, row: tuple) -> tuple:
        values = list(row)
        for index, field in self.prepare:
            values[index] = field.get_db_prep_save(values[index], connection)
        return tuple(values)


def _followup_support() -> tuple[type, type, Callable, Callable, Callable] | None:
    """Return the follow-up models and rules when the followups app provides them."""
    try:
        from assessments.models import risk_rank
        from followups.models import FollowUp, FollowUpArea
        from followups.services import followup_due_date
    except ImportError:
        return None
    return FollowUp, FollowUpArea, risk_rank, followup_due_date, FollowUp.Status


def _alert_support() -> type | None:
    """Return the safeguarding alert model when the safeguarding app provides it."""
    try:
        from safeguarding.models import Alert
    except ImportError:
        return None
    return Alert


def _read_model_refresh() -> Callable | None:
    """Return the dashboard's read-model refresh (results bypass its signal here), if any."""
    try:
        from dashboard.cohort import cohort_refresh
    except ImportError:
        return None
    return cohort_refresh


def _attempt_counts(rng: random.Random, learners: int, attempts: int) -> list[int]:
    """Spread the attempts over the learners at random (about Poisson; some have none)."""
    counts = [0] * learners
    if learners:
        for index in rng.choices(range(learners), k=attempts):
            counts[index] += 1
    return counts


def _latest_states(rng: random.Random, counts: list[int], attempts: int) -> dict[int, str]:
    """Choose which learners' latest attempt is still open or waiting, and in which state."""
    open_states = [state for state in STATE_MIX if state not in FINISHED]
    pool = [state for state in open_states for _ in range(round(STATE_MIX[state] * attempts))]
    with_attempts = [index for index, count in enumerate(counts) if count]
    rng.shuffle(pool)
    chosen = rng.sample(with_attempts, min(len(pool), len(with_attempts)))
    return dict(zip(chosen, pool, strict=False))


def _between(rng: random.Random, start: datetime, end: datetime) -> datetime:
    return start + (end - start) * rng.random()


def generate_cohort(
    learners: int,
    attempts: int,
    seed: int,
    stdout: IO[str],
    *,
    batch: int = 5000,
    password: str | None = None,
    school_ids: Sequence[int] = (),
) -> dict:
    """Generate learners, attempts, results, focus areas, follow-ups and alerts; return counts.

    The learners are shared out between `school_ids` in turn (else all in the first school).
    """
    rng = random.Random(seed)
    school_ids = list(school_ids) or [first_school_id()]
    started = time.monotonic()
    now = timezone.now()
    User = get_user_model()
    follow_ups = _followup_support()
    alerts = _alert_support() if follow_ups else None
    read_model_refresh = _read_model_refresh()
    # One hash for everyone: hashing 100,000 passwords would take hours. Without a password
    # nobody can sign in as a generated learner until staff reset theirs.
    password_hash = make_password(password or secrets.token_urlsafe(24))
    rejected_share = STATE_MIX[State.REJECTED] / (
        STATE_MIX[State.REJECTED] + STATE_MIX[State.COMPLETED]
    )
    counts = _attempt_counts(rng, learners, attempts)
    latest_state = _latest_states(rng, counts, attempts)

    writers = {
        User: _TableWriter(
            User, ["id", "password", "username", "is_active", "is_staff", "is_superuser",
                   "first_name", "last_name", "email", "date_joined"]),
        Learner: _TableWriter(
            Learner, ["id", "user_id", "upstream_user_id", "username", "first_name",
                      "last_name", "email", "dob", "level", "status", "registered_at",
                      "school_id"]),
        AssessmentAttempt: _TableWriter(
            AssessmentAttempt, ["id", "learner_id", "assessment_id", "assessment_version",
                                "target_group", "offer_status", "title", "level", "version",
                                "preassess", "content", "session", "state", "offered_at",
                                "started_at", "last_saved_at", "submitted_at", "completed_at",
                                "last_error", "state_changed_at", "delivery_attempts"]),
        AssessmentResult: _TableWriter(
            AssessmentResult, ["id", "attempt_id", "loa_score", "risk_level", "trait_title",
                               "trait_copy", "trait_signs_raw", "trait_signs_html",
                               "trait_tips_raw", "trait_tips_html", "result_description_raw",
                               "result_description_html", "received_at"]),
        FocusArea: _TableWriter(
            FocusArea, ["id", "result_id", "name", "needs_help", "questions_count", "position"]),
    }  # fmt: skip
    if follow_ups:
        FollowUp, FollowUpArea, *_ = follow_ups
        writers[FollowUp] = _TableWriter(
            FollowUp, ["id", "learner_id", "attempt_id", "risk_level", "risk_rank", "status",
                       "due_date", "created_at", "updated_at", "priority", "source",
                       "school_id", "resolved_at"])  # fmt: skip
        writers[FollowUpArea] = _TableWriter(FollowUpArea, ["id", "follow_up_id", "name"])
    if alerts:
        # A priority item is opened with its alert, as the portal's own rules do; written
        # acknowledged (no email is ever sent here), so no banner counts thousands waiting.
        writers[alerts] = _TableWriter(
            alerts, ["id", "kind", "reason", "school_id", "learner_id", "attempt_id",
                     "follow_up_id", "values", "urgent", "about", "wanted_contact", "category",
                     "raised_at", "escalate_at", "acknowledged_at",
                     "acknowledged_by_username"])  # fmt: skip

    totals = dict.fromkeys(writers, 0)
    with transaction.atomic():
        ids = _Ids({model: (model.objects.aggregate(top=Max("pk"))["top"] or 0) + 1
                    for model in writers})  # fmt: skip
        next_assessment_id = 9_000_000_000 + ids.next[AssessmentAttempt]
        for chunk_start in range(0, learners, batch):
            rows: dict[type[models.Model], list[tuple]] = {model: [] for model in writers}
            for index in range(chunk_start, min(chunk_start + batch, learners)):
                learner_id = ids.take(Learner)
                school_id = school_ids[index % len(school_ids)]
                user_id = ids.take(User)
                first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
                username = f"{first}.{last}.{learner_id}".lower().replace("'", "")
                email = f"{username}@learners.example.org" if rng.random() < WITH_EMAIL else ""
                level, ages = _level(rng)
                registered_at = now - REGISTRATION_SPAN * rng.random()
                age_days = rng.randint(ages[0] * 365, ages[1] * 365 + 364)
                dob = timezone.localdate(registered_at) - timedelta(days=age_days)
                rows[User].append((user_id, password_hash, username, True, False, False,
                                   "", "", "", registered_at))  # fmt: skip
                rows[Learner].append((learner_id, user_id, f"{GENERATED_PREFIX}{learner_id}",
                                      username, first, last, email, dob, level,
                                      Learner.Status.ACTIVE, registered_at,
                                      school_id))  # fmt: skip
                offered = sorted(_between(rng, registered_at, now) for _ in range(counts[index]))
                for position, offered_at in enumerate(offered):
                    if position == len(offered) - 1 and index in latest_state:
                        state = latest_state[index]
                    elif rng.random() < rejected_share:
                        state = State.REJECTED
                    else:
                        state = State.COMPLETED
                    attempt_id = ids.take(AssessmentAttempt)
                    _attempt_rows(
                        rng, rows, ids, follow_ups, alerts, now=now, learner_id=learner_id,
                        school_id=school_id,
                        attempt_id=attempt_id, assessment_id=next_assessment_id + attempt_id,
                        level=level, state=state, offered_at=offered_at,
                    )  # fmt: skip
            for model, writer in writers.items():
                writer.write(rows[model])
                totals[model] += len(rows[model])
            if read_model_refresh:
                read_model_refresh(learner_ids=[row[0] for row in rows[Learner]])
            done = min(chunk_start + batch, learners)
            stdout.write(
                f"  {done:,}/{learners:,} learners, {totals[AssessmentAttempt]:,} attempts, "
                f"{totals[AssessmentResult]:,} results ({time.monotonic() - started:.1f} s)\n"
            )
            stdout.flush()
        _sequences_reset(list(writers))
    _analyze()
    summary = {model._meta.label: count for model, count in totals.items()}
    summary["seconds"] = round(time.monotonic() - started, 1)
    return summary


def _level(rng: random.Random) -> tuple[str, tuple[int, int]]:
    pick = rng.random()
    for level, share, ages in LEVEL_MIX:
        if pick < share:
            return level, ages
        pick -= share
    return LEVEL_MIX[-1][0], LEVEL_MIX[-1][2]


def _attempt_rows(
    rng: random.Random,
    rows: dict,
    ids: _Ids,
    follow_ups,
    alerts,
    *,
    now: datetime,
    learner_id: int,
    school_id: int,
    attempt_id: int,
    assessment_id: int,
    level: str,
    state: str,
    offered_at: datetime,
) -> None:
    """Add one attempt's rows, with results, focus areas and a follow-up when completed."""
    started_at = last_saved_at = submitted_at = completed_at = None
    changed_at = offered_at
    if state != State.AVAILABLE:
        started_at = min(offered_at + timedelta(minutes=rng.uniform(1, 4320)), now)
        last_saved_at = min(started_at + timedelta(minutes=rng.uniform(1, 40)), now)
        changed_at = last_saved_at
    if state not in AssessmentAttempt.OPEN_STATES:
        submitted_at = changed_at = last_saved_at
    if state == State.COMPLETED:
        completed_at = changed_at = min(submitted_at + timedelta(seconds=rng.uniform(1, 30)), now)
    last_error = {
        State.REJECTED: "The assessment service refused the answers: session expired.",
        State.SUBMIT_PENDING: "The assessment service did not answer in time.",
    }.get(state, "")
    upstream_level = LEVELS[level]
    rows[AssessmentAttempt].append((
        attempt_id, learner_id, assessment_id, ASSESSMENT_VERSION, upstream_level.target_group,
        "Assessment available", upstream_level.title, level,
        Decimal(ASSESSMENT_VERSION_DECIMAL), False, {}, "", state, offered_at, started_at,
        last_saved_at, submitted_at, completed_at, last_error, changed_at,
        1 if state == State.SUBMIT_PENDING else 0,
    ))  # fmt: skip
    if state != State.COMPLETED:
        return

    result_id = ids.take(AssessmentResult)
    flagged: list[str] = []
    if rng.random() < FLAGGED_SHARE:
        how_many = rng.choices(range(1, len(FLAGGED_COUNT_WEIGHTS) + 1), FLAGGED_COUNT_WEIGHTS)[0]
        flagged = rng.sample(FOCUS_AREAS, how_many)
        score = rng.uniform(60, 72) - 9 * how_many + rng.uniform(-8, 8)
    else:
        score = rng.uniform(52, 96)
    score = round(max(score, 5.0), 2)
    risk = risk_level(score)
    weakest = next((area for area in FOCUS_AREAS if area in flagged), None)
    # The words the sandbox would send for the learner's age (primary pupils have their own).
    traits, balanced = traits_for_level(level)
    trait = traits[weakest] if weakest else balanced
    signs = "<ul>" + "".join(f"<li>{sign}</li>" for sign in trait.signs) + "</ul>"
    tips = f"<p>{trait.tips_intro}</p><ol>" + "".join(f"<li>{t}</li>" for t in trait.tips)
    tips += "</ol>"
    description = description_html(score, risk, [a for a in FOCUS_AREAS if a in flagged], level)
    rows[AssessmentResult].append((
        result_id, attempt_id, Decimal(str(score)), risk, trait.title, trait.copy, signs, signs,
        tips, tips, description, description, completed_at,
    ))  # fmt: skip
    for position, area in enumerate(FOCUS_AREAS):
        needs_help = "yes" if area in flagged else "no"
        rows[FocusArea].append((ids.take(FocusArea), result_id, area, needs_help, 4, position))
    # A HIGH risk level is on the default priority list: an item opens even with no area
    # flagged, sorts first and comes with an alert (acknowledged: no email is ever sent).
    priority = risk == "HIGH"
    if follow_ups and (flagged or priority):
        FollowUp, FollowUpArea, risk_rank, followup_due_date, statuses = follow_ups
        follow_up_id = ids.take(FollowUp)
        due_date: date = followup_due_date(opened_at=completed_at)
        status = _followup_status(rng, statuses, age=now - completed_at)
        # The retention of a routine item's records counts from when it was resolved.
        resolved_at = None
        if status == statuses.RESOLVED:
            spread = timedelta(hours=1 + follow_up_id % (24 * RESOLVED_WITHIN_DAYS))
            resolved_at = min(completed_at + spread, now)
        rows[FollowUp].append((follow_up_id, learner_id, attempt_id, risk, risk_rank(risk),
                               status, due_date, completed_at, resolved_at or completed_at,
                               priority, "result", school_id, resolved_at))  # fmt: skip
        if priority and alerts:
            spread = timedelta(minutes=5 + follow_up_id % (ACKNOWLEDGED_WITHIN_MINUTES - 4))
            acknowledged_at = min(completed_at + spread, now)
            values = [{"field": "risk_level", "value": risk, "reason": "priority"}]
            rows[alerts].append((ids.take(alerts), "result", "priority", school_id, learner_id,
                                 attempt_id, follow_up_id, values, False, "", "", "",
                                 completed_at, completed_at + ESCALATE_AFTER, acknowledged_at,
                                 GENERATED_LEAD))  # fmt: skip
        for area in FOCUS_AREAS:
            if area in flagged:
                rows[FollowUpArea].append((ids.take(FollowUpArea), follow_up_id, area))


def _followup_status(rng: random.Random, statuses, *, age: timedelta) -> str:
    """Return a plausible status: recent items are mostly new, old ones mostly resolved."""
    if age < timedelta(days=14):
        mix = ((statuses.NEW, 0.6), (statuses.CONTACTED, 0.3), (statuses.REFERRED, 0.1))
    elif age < timedelta(days=90):
        mix = ((statuses.NEW, 0.15), (statuses.CONTACTED, 0.3), (statuses.REFERRED, 0.2),
               (statuses.RESOLVED, 0.35))  # fmt: skip
    else:
        mix = ((statuses.NEW, 0.03), (statuses.CONTACTED, 0.05), (statuses.REFERRED, 0.07),
               (statuses.RESOLVED, 0.85))  # fmt: skip
    return rng.choices([status for status, _ in mix], [share for _, share in mix])[0]


def _sequences_reset(models_written: Iterable[type[models.Model]]) -> None:
    """Move PostgreSQL's id sequences past the explicit ids (SQLite follows by itself)."""
    statements = connection.ops.sequence_reset_sql(no_style(), list(models_written))
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def _analyze() -> None:
    """Refresh the planner's statistics (and PostgreSQL's visibility map) after a bulk load."""
    # The whole database: tables filled from these rows by other apps (the dashboard's read
    # model) need it as much as the ones written here.
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql" and connection.get_autocommit():
            cursor.execute("VACUUM (ANALYZE)")
        else:
            cursor.execute("ANALYZE")


def generated_learners() -> models.QuerySet[Learner]:
    """Return the learners this generator made (and only those)."""
    return Learner.objects.filter(upstream_user_id__startswith=GENERATED_PREFIX)


def cohort_clear(*, stdout: IO[str], batch: int = 2000) -> int:
    """Delete generated learners with everything that hangs off them; return how many."""
    User = get_user_model()
    learner_ids = list(generated_learners().order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(learner_ids), batch):
        chunk = learner_ids[start : start + batch]
        with transaction.atomic():
            user_ids = list(Learner.objects.filter(pk__in=chunk).values_list("user_id", flat=True))
            # In chunks: the ORM's cascade (attempts, results, follow-ups, audit rows) loads
            # the rows it deletes, and focus areas go by one DELETE per chunk. Alerts only
            # lose their learner on a delete (a real one outlives an erasure): these go first.
            if alerts := _alert_support():
                alerts.objects.filter(learner_id__in=chunk).delete()
            Learner.objects.filter(pk__in=chunk).delete()
            User.objects.filter(pk__in=user_ids).delete()
        stdout.write(f"  deleted {min(start + batch, len(learner_ids)):,}/{len(learner_ids):,}\n")
        stdout.flush()
    return len(learner_ids)
