"""Builders of the records tests need: people, attempts, results, follow-ups, form data.

Also a test client signed in as someone (`signed_in`).
"""

from collections.abc import Iterable
from datetime import date, datetime, timedelta
from decimal import Decimal
from hashlib import sha256
from io import BytesIO
from itertools import count
from zoneinfo import ZoneInfo

from django import forms
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from PIL import Image as PillowImage

from accounts.access import STAFF_GROUP
from accounts.models import SignInLock, StaffRole
from accounts.services import staff_role_set
from assessments.content import questions_to_json
from assessments.models import AssessmentAttempt, AssessmentResult, FocusArea
from assessments.signals import result_stored
from classes.models import GroupMembership, GroupStaff, SchoolGroup
from dashboard.cohort import cohort_refresh
from followups.models import FollowUp
from imports.models import ImportJob, ImportRow
from learners.models import Learner, Level
from partner_api import Answer, Question
from pictures.models import Picture
from pictures.selectors import address_hash
from safeguarding.models import Alert
from schools.models import PartnerSettings
from staff.forms import PartnerSettingsForm

State = AssessmentAttempt.State

# People ----------------------------------------------------------------------------------------

PASSWORD = "correct-horse-battery"  # the sign-in password of make_staff's and make_learner's people


def make_staff(
    username: str,
    password: str | None = PASSWORD,
    *,
    role: str = StaffRole.DSL,
    groups: Iterable[SchoolGroup] = (),
    school=None,
) -> User:
    """Create a member of the partner's staff (no usable password if `password` is None).

    The default role, a safeguarding lead, sees every learner, result and follow-up; it is
    held in `school` (else the partner's first school), a trust role above every school.
    """
    user = User.objects.create_user(username, password=password)
    user.groups.add(Group.objects.get_or_create(name=STAFF_GROUP)[0])
    staff_role_set(user=user, role=role, school_id=school.pk if school else None)
    for group in groups:
        GroupStaff.objects.create(group=group, user=user)
    return user


# The safeguarding lead every test database has (tests/conftest.py): not one a test names.
DSL_ON_DUTY = "dsl.on.duty"
DSL_ON_DUTY_EMAIL = "dsl.on.duty@school.example"


def signed_in(user: User, school=None) -> Client:
    """Return a test client signed in as the user, working in the school ("all": every one)."""
    client = Client()
    client.force_login(user)
    if school is not None:
        session = client.session
        session["working_school"] = school if school == "all" else school.pk
        session.save()
    return client


def make_dsl_on_duty() -> User:
    """Create the DSL with an email address that lets assessments start."""
    user = User.objects.filter(username=DSL_ON_DUTY).first()
    if user is None:
        user = make_staff(DSL_ON_DUTY, None)
        user.email = DSL_ON_DUTY_EMAIL
        user.save(update_fields=["email"])
    return user


def make_group(
    name: str, *, level: str = Level.SECONDARY, kind=SchoolGroup.Kind.TEACHING_CLASS, school=None
):
    """Create a group of this academic year, in `school` (else the school worked in)."""
    placed = {"school": school} if school is not None else {}
    return SchoolGroup.objects.create(name=name, level=level, kind=kind, **placed)


def put_in_group(group: SchoolGroup, *learners: Learner) -> None:
    """Make learners current members of a group."""
    GroupMembership.objects.bulk_create(
        GroupMembership(group=group, learner=learner) for learner in learners
    )


def make_learner(username: str, upstream_user_id: str, *, school=None) -> Learner:
    """Create an active learner with a sign-in account, as registration leaves it.

    In `school`, else the school worked in (else the partner's first).
    """
    user = User.objects.create_user(username, password=PASSWORD)
    placed = {"school": school} if school is not None else {}
    return Learner.objects.create(
        **placed,
        user=user,
        username=username,
        first_name=username.split(".")[0].title(),
        last_name="Pupil",
        dob=date(2010, 5, 17),
        level=Level.SECONDARY,
        upstream_user_id=upstream_user_id,
        status=Learner.Status.ACTIVE,
    )


def make_sign_in_lock(
    *,
    kind: str,
    user: User | None = None,
    address: str | None = None,
    device: str = "",
    minutes: int = 15,
) -> SignInLock:
    """Record a sign-in lock in force as the throttle does (its cache keys are not set)."""
    return SignInLock.objects.create(
        kind=kind,
        user=user,
        address=address,
        device=device,
        scope_ref=f"{kind}:test-{user.pk if user else address}",
        locked_until=timezone.now() + timedelta(minutes=minutes),
    )


# An attempt with questions to take, and its results (the learner's pages) -----------------------


def question(qid: str, group: str, text: str, order: int, copies=("Never", "Often")) -> Question:
    """Build a question of the client's type with one answer per copy."""
    return Question(
        id=qid,
        text=text,
        group=group,
        display_order=order,
        created=None,
        updated=None,
        answers=[
            Answer(id=f"{qid}-a{n}", question_id=qid, display_order=n, copy=copy, icon="often")
            for n, copy in enumerate(copies, start=1)
        ],
    )


# Three questions on two pages: "Sleep" (two questions), then "Study".
CONTENT = questions_to_json(
    [
        question("q-sleep", "Sleep", "I sleep well", 1),
        question("q-wake", "Sleep", "I wake up rested", 2),
        question("q-notes", "Study", "I keep notes", 3),
    ]
)


def make_attempt(learner, *, assessment_id=41, state=State.IN_PROGRESS, content=CONTENT):
    """Create an attempt of the learner's with stored questions and an upstream session."""
    return AssessmentAttempt.objects.create(
        learner=learner,
        assessment_id=assessment_id,
        title="Study skills check",
        content=content,
        session="700",
        state=state,
        state_changed_at=timezone.now(),
    )


# Answers with pictures given by address (issue 31): the portal fetches and serves them itself.
SUN = "https://pictures.upstream.example/sun.png"
MOON = "https://pictures.upstream.example/moon.png"


def pictured_content() -> dict:
    """Two questions in one Group; the first's answers have pictures given by address."""
    answers = [("a1", "Happy", SUN), ("a2", "Sad", MOON), ("a3", "Not sure", "smile")]
    feel = Question(
        id="q-feel", text="How do you feel at school?", group="Feelings", display_order=1,
        created=None, updated=None,
        answers=[
            Answer(id=f"q-feel-{key}", question_id="q-feel", display_order=n, copy=copy, icon=icon)
            for n, (key, copy, icon) in enumerate(answers, start=1)
        ],
    )  # fmt: skip
    play = Question(
        id="q-play", text="Do you have friends to play with?", group="Feelings",
        display_order=2, created=None, updated=None,
        answers=[
            Answer(id="q-play-a1", question_id="q-play", display_order=1, copy="Yes", icon=""),
            Answer(id="q-play-a2", question_id="q-play", display_order=2, copy="No", icon=""),
        ],
    )  # fmt: skip
    return questions_to_json([feel, play])


def ready_picture(address: str) -> Picture:
    """Keep a small PNG for an icon address, fetched and ready to serve from the portal."""
    image = BytesIO()
    PillowImage.new("RGB", (64, 64), "orange").save(image, format="PNG")
    data = image.getvalue()
    return Picture.objects.create(
        address=address, address_hash=address_hash(address), state=Picture.State.READY,
        image=data, content_type="image/png", digest=sha256(data).hexdigest(),
        width=64, height=64,
    )  # fmt: skip


def make_result(attempt) -> AssessmentResult:
    """Store results for the attempt (SLEEP needs help, FOCUS not) and mark it completed."""
    result = AssessmentResult.objects.create(
        attempt=attempt,
        loa_score=Decimal("61.50"),
        risk_level="Medium",
        trait_title="The <planner>",
        trait_copy="You like lists.",
        trait_tips_html="<ol><li>Sleep more</li></ol>",
    )
    FocusArea.objects.create(result=result, name="SLEEP", needs_help="yes", questions_count=2)
    FocusArea.objects.create(result=result, name="FOCUS", needs_help="no", questions_count=3)
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(state=State.COMPLETED)
    return result


# A cohort on given days (the dashboard, exports, a learner's trend) -----------------------------

LONDON = ZoneInfo("Europe/London")
_ids = count(1)  # usernames and assessment ids, unique across the whole run


def at(day: str, hour: int = 12) -> datetime:
    """Return noon (or the hour given) of an ISO date, London time."""
    return datetime.fromisoformat(day).replace(hour=hour, tzinfo=LONDON)


def cohort_learner(
    *, level: str = Level.SECONDARY, registered: str = "2026-09-01", name: str = ""
) -> Learner:
    """Create an active learner registered on a given day."""
    number = next(_ids)
    username = name or f"pupil{number}"
    learner = Learner.objects.create(
        user=User.objects.create_user(username),
        username=username,
        first_name=username.title(),
        last_name="Pupil",
        level=level,
        upstream_user_id=f"u-{username}",
        status=Learner.Status.ACTIVE,
    )
    Learner.objects.filter(pk=learner.pk).update(registered_at=at(registered))
    return learner


def attempt(
    learner: Learner,
    *,
    state: str,
    offered: str = "2026-09-02",
    submitted: str | None = None,
    completed: str | None = None,
    title: str = "Study skills",
) -> AssessmentAttempt:
    """Create an attempt in a state, with its dates."""
    made = AssessmentAttempt.objects.create(
        learner=learner, assessment_id=next(_ids), state=state, title=title
    )
    AssessmentAttempt.objects.filter(pk=made.pk).update(
        offered_at=at(offered),
        submitted_at=at(submitted) if submitted else None,
        completed_at=at(completed) if completed else None,
    )
    made.refresh_from_db()
    return made


def completed(
    learner: Learner,
    day: str,
    *,
    risk: str = "HIGH",
    score: str = "40",
    areas: dict[str, str] | None = None,
    hour: int = 12,
    title: str = "Study skills",
    count_it: bool = True,
) -> AssessmentResult:
    """Create a completed attempt on a day with its results and focus areas."""
    done = attempt(learner, state=State.COMPLETED, offered=day, submitted=day, title=title)
    AssessmentAttempt.objects.filter(pk=done.pk).update(completed_at=at(day, hour))
    result = AssessmentResult.objects.create(
        attempt=done, loa_score=Decimal(score), risk_level=risk
    )
    AssessmentResult.objects.filter(pk=result.pk).update(received_at=at(day, hour))
    if areas is None:
        areas = {"Time management": "yes", "Sleep": "no"}
    FocusArea.objects.bulk_create(
        FocusArea(result=result, name=name, needs_help=value, questions_count=3, position=i)
        for i, (name, value) in enumerate(areas.items())
    )
    if count_it:
        # What the result_stored receiver does when delivery stores a result.
        cohort_refresh(learner_ids=[learner.pk])
    return result


# Results that flag focus areas, and the follow-ups they open ------------------------------------

SLEEP, FOCUS, STRESS = "SLEEP & TIREDNESS", "FOCUS & ATTENTION", "STRESS & STRAIN"

_assessment_ids = iter(range(9000, 99999))


def complete_attempt(
    learner: Learner,
    areas: dict[str, str],
    *,
    risk_level: str = "MODERATE",
    signal: bool = True,
) -> AssessmentResult:
    """Store a completed attempt and its results as delivery does, signal included."""
    attempt = AssessmentAttempt.objects.create(
        learner=learner,
        assessment_id=next(_assessment_ids),
        title="Study habits check",
        state=State.COMPLETED,
        completed_at=timezone.now(),
    )
    result = AssessmentResult.objects.create(
        attempt=attempt, loa_score=Decimal("48.5"), risk_level=risk_level
    )
    for position, (name, needs_help) in enumerate(areas.items()):
        FocusArea.objects.create(
            result=result, name=name, needs_help=needs_help, questions_count=4, position=position
        )
    if signal:
        result_stored.send(sender=AssessmentResult, result=result)
    return result


def flagged(learner: Learner, *areas: str, **kwargs) -> FollowUp:
    """Complete an attempt of the learner needing help in `areas`; return its item."""
    result = complete_attempt(learner, {**{a: "yes" for a in areas}, "MEMORY": "no"}, **kwargs)
    return FollowUp.objects.get(attempt=result.attempt)


# Registering learners: the form, and CSV files for bulk registration ----------------------------

# The registration form's fields, every one valid.
VALID = {
    "username": "nina.new",
    "password": "Quiet-Library-Hours-7",
    "dob": "2009-03-27",
    "email": "nina@example.org",
    "first_name": "Nina",
    "last_name": "New",
    "level": "LOA_PARTNER_LEVEL2",
}

HEADER = "username,password,dob,email,first_name,last_name,level"
GOOD_PASSWORD = "plum-kettle-river-42"


def upload_file(text: str, name: str = "learners.csv", *, bom: bool = False) -> SimpleUploadedFile:
    """Wrap CSV text as an uploaded file, with a byte-order mark if asked."""
    data = text.encode("utf-8")
    return SimpleUploadedFile(name, (b"\xef\xbb\xbf" if bom else b"") + data, "text/csv")


def good_rows(count: int, prefix: str = "pupil", password: str = GOOD_PASSWORD) -> str:
    """Return `count` valid CSV rows (no header) of learners named prefix0, prefix1, ..."""
    return "".join(
        f"{prefix}{n},{password},2010-0{n % 9 + 1}-1{n % 9},,Pat{n},Lee,LOA_PARTNER_LEVEL2\n"
        for n in range(count)
    )


def mid_way(job: ImportJob, *, reason: str = "The service said no.") -> tuple[datetime, list[int]]:
    """Put a checked job mid-run; return the time it used and the sendable rows' keys."""
    # 50 s in, its workers busy: 4 rows registered, 1 failed with `reason`, 1 being sent, the
    # rest waiting. Its rows queued and the one claimed "in five minutes": however slow the
    # test, a page neither runs the job again nor takes the row for cut off.
    now = timezone.now()
    alive = now + timedelta(minutes=5)
    ImportJob.objects.filter(pk=job.pk).update(
        state=ImportJob.State.RUNNING,
        confirmed_at=now,
        started_at=now - timedelta(seconds=50),
        rows_queued_at=alive,
    )
    rows = list(
        job.rows.exclude(state="invalid").order_by("row_number").values_list("pk", flat=True)
    )
    ImportRow.objects.filter(pk__in=rows[:4]).update(state="registered", signin_ready_at=now)
    ImportRow.objects.filter(pk=rows[4]).update(state="failed", reason=reason)
    ImportRow.objects.filter(pk=rows[5]).update(state="sending", claimed_at=alive)
    return now, rows


# The partner's settings form --------------------------------------------------------------------


def settings_form(**changes: object) -> dict[str, str]:
    """Return the settings form as a browser posts it: every field as it stands, with `changes`."""
    form = PartnerSettingsForm(instance=PartnerSettings.current())
    data: dict[str, str] = {}
    for name, field in form.fields.items():
        value = changes.get(name, form.initial.get(name))
        if isinstance(field, forms.BooleanField):
            if value:
                data[name] = "on"  # an unticked box sends nothing
        elif value is not None:
            data[name] = str(value)
    return data


def make_asked_alert(learner, *, minutes_ago: int = 20, **fields) -> Alert:
    """Raise a learner's request to talk `minutes_ago`, waiting for a lead (escalates at 30)."""
    raised = timezone.now() - timedelta(minutes=minutes_ago)
    return Alert.objects.create(
        kind=Alert.Kind.ASKED,
        reason=Alert.Reason.ASKED,
        learner=learner,
        raised_at=raised,
        escalate_at=raised + timedelta(minutes=30),
        **fields,
    )
