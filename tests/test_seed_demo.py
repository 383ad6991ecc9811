"""The living demo: `manage.py seed_demo` fills an empty portal through the sandbox."""

import io
import logging
from datetime import date, timedelta

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.utils import timezone

from accounts.access import (
    STAFF_GROUP,
    safeguarding_ready,
    staff_role,
    trust_role,
    trust_safeguarding_leads,
)
from accounts.models import SchoolRole, StaffRole
from assessments.models import AssessmentAttempt
from classes.models import SchoolGroup
from dashboard.models import CohortResult
from demo import trust
from demo.management.commands import demo_staff
from demo.seeding import COLLEAGUE_USERNAME
from followups.models import FollowUp, FollowUpNote
from learners.models import Learner, Level
from partner_api import get_client
from privacy.selectors import hold_of
from safeguarding.models import Alert
from schools.models import School
from tests.factories import make_learner, make_staff

State = AssessmentAttempt.State

COHORT = 16


@pytest.fixture
def demo_staff_user(db) -> User:
    """The account `manage.py demo_staff` creates before `make run` seeds the demo."""
    return make_staff(demo_staff.DEMO_USERNAME, password="not-used-here")


def seed(**options) -> str:
    out = io.StringIO()
    call_command("seed_demo", stdout=out, stderr=io.StringIO(), **options)
    return out.getvalue()


@pytest.fixture
def seeded(upstream, demo_staff_user, caplog):
    """A demo cohort of COHORT learners, seeded once, with its output and the logs."""
    caplog.set_level(logging.DEBUG)
    output = seed(learners=COHORT, wait=5)
    return output


def test_it_registers_the_cohort_upstream_across_the_three_levels(seeded, upstream):
    learners = Learner.objects.all()

    assert learners.count() == COHORT
    assert all(learner.status == Learner.Status.ACTIVE for learner in learners)
    assert len(upstream.state.learners) == COHORT
    for level in Level:
        assert learners.filter(level=level).count() >= COHORT // 3
    assert f"{COHORT} learners" in seeded


def test_each_demo_learner_is_in_the_class_of_their_level(seeded):
    for learner in Learner.objects.all():
        groups = list(learner.group_memberships.values_list("group__level", flat=True))
        assert groups == [learner.level]
    assert SchoolGroup.objects.count() == 3


def test_the_demo_accounts_are_a_safeguarding_lead_and_an_admin(db, tmp_path, monkeypatch):
    monkeypatch.setattr(demo_staff, "PASSWORD_FILE", tmp_path / "password")

    call_command("demo_staff", stdout=io.StringIO())

    assert staff_role(User.objects.get(username=demo_staff.DEMO_USERNAME)) == StaffRole.DSL
    assert staff_role(User.objects.get(username=demo_staff.DEMO_ADMIN_USERNAME)) == "admin"


@pytest.mark.no_dsl
def test_the_demo_trust_has_two_schools_each_lead_and_the_trusts_people(db, tmp_path, monkeypatch):
    monkeypatch.setattr(demo_staff, "PASSWORD_FILE", tmp_path / "password")

    outputs = [run_demo_staff() for _run in range(2)]

    schools = {school.code: school.name for school in School.objects.all()}
    assert schools == {"100001": "Oak Primary", "100002": "Ash Academy"}
    primary, secondary = School.objects.get(code="100001"), School.objects.get(code="100002")
    assert safeguarding_ready(primary.pk) and safeguarding_ready(secondary.pk)
    oak_lead = User.objects.get(username=trust.PRIMARY_LEAD_USERNAME)
    assert list(SchoolRole.objects.filter(user=oak_lead).values_list("school", "role")) == [
        (primary.pk, StaffRole.DSL)
    ]
    trust_admin = User.objects.get(username=trust.TRUST_ADMIN_USERNAME)
    trust_lead = User.objects.get(username=trust.TRUST_LEAD_USERNAME)
    assert trust_role(trust_admin) == StaffRole.TRUST_ADMIN
    assert trust_role(trust_lead) == StaffRole.TRUST_SAFEGUARDING_LEAD
    assert list(trust_safeguarding_leads()) == [trust_lead]  # an email: escalations reach them
    output = outputs[1]
    password = output.split("password for all: ")[1].split()[0]
    assert outputs[0] == output and output.count(password) == 1
    for username in (
        demo_staff.DEMO_USERNAME,
        demo_staff.DEMO_ADMIN_USERNAME,
        trust.PRIMARY_LEAD_USERNAME,
        trust.TRUST_ADMIN_USERNAME,
        trust.TRUST_LEAD_USERNAME,
    ):
        assert f"    {username} (" in output
        assert User.objects.get(username=username).check_password(password)
    assert "Ash Academy (100002, secondary) and Oak Primary (100001, primary)" in output


def run_demo_staff() -> str:
    out = io.StringIO()
    call_command("demo_staff", stdout=out)
    return out.getvalue()


def test_primary_pupils_are_in_the_primary_the_others_in_the_secondary(seeded):
    primary, secondary = School.objects.get(code="100001"), School.objects.get(code="100002")

    assert School.objects.count() == 2
    for learner in Learner.objects.all():
        assert learner.school == (primary if learner.level == Level.PRIMARY else secondary)
    for group in SchoolGroup.objects.all():
        assert group.school == (primary if group.level == Level.PRIMARY else secondary)
    assessed = AssessmentAttempt.objects.filter(state=State.COMPLETED)
    assert assessed.filter(learner__school=primary).exists()
    assert assessed.filter(learner__school=secondary).exists()
    assert FollowUp.objects.filter(school=primary).exists()


@pytest.mark.no_dsl
def test_the_demo_lead_has_an_email_and_an_acknowledged_test_alert(db, tmp_path, monkeypatch):
    monkeypatch.setattr(demo_staff, "PASSWORD_FILE", tmp_path / "password")

    for _run in range(2):
        call_command("demo_staff", stdout=io.StringIO())

    lead = User.objects.get(username=demo_staff.DEMO_USERNAME)
    assert lead.email and safeguarding_ready()
    test = Alert.objects.get(kind=Alert.Kind.TEST, test_recipient=lead)
    assert test.acknowledged_by == lead


def test_every_demo_safeguarding_lead_and_deputy_has_an_email(seeded):
    leads = User.objects.filter(
        school_roles__role__in=[StaffRole.DSL, StaffRole.DEPUTY_DSL]
    ).distinct()

    usernames = {lead.username for lead in leads}
    assert {trust.DEMO_USERNAME, trust.PRIMARY_LEAD_USERNAME, COLLEAGUE_USERNAME} <= usernames
    assert [lead.username for lead in leads if not lead.email] == []
    trust_lead = User.objects.get(username=trust.TRUST_LEAD_USERNAME)
    assert trust_lead.email


def test_most_learners_completed_an_assessment_some_are_in_progress_some_twice(seeded):
    attempts = AssessmentAttempt.objects.all()
    completed = attempts.filter(state=State.COMPLETED, result__isnull=False)

    with_completed = Learner.objects.filter(attempts__in=completed).distinct().count()
    assert with_completed > COHORT // 2
    assert attempts.filter(state=State.IN_PROGRESS, answers__isnull=False).exists()
    assert any(learner.attempts.filter(state=State.COMPLETED).count() == 2
               for learner in Learner.objects.all())  # fmt: skip
    risk_levels = {attempt.result.risk_level for attempt in completed.select_related("result")}
    assert len(risk_levels) >= 2


def test_the_dates_are_spread_over_the_last_two_months(seeded):
    now = timezone.now()
    registered = sorted(Learner.objects.values_list("registered_at", flat=True))
    completed = AssessmentAttempt.objects.filter(state=State.COMPLETED).values_list(
        "completed_at", flat=True
    )

    assert registered[0] < now - timedelta(days=30)
    assert registered[-1] > now - timedelta(days=30)
    assert registered[0] > now - timedelta(days=61)
    assert all(learner_time < now for learner_time in registered)
    assert min(completed) < now - timedelta(days=20) and max(completed) <= now


def test_the_dashboard_counts_each_result_on_the_day_the_demo_dates_it(seeded):
    completed = AssessmentAttempt.objects.filter(state=State.COMPLETED)

    # The dashboard's figures come from its read model: the same results, at the same dates.
    assert sorted(CohortResult.objects.values_list("completed_at", flat=True)) == sorted(
        completed.values_list("completed_at", flat=True)
    )
    assert min(CohortResult.objects.values_list("completed_at", flat=True)) < (
        timezone.now() - timedelta(days=20)
    )


def test_the_follow_up_queue_has_items_some_assigned_to_the_demo_staff_with_notes(
    seeded, demo_staff_user
):
    flagged = [
        attempt
        for attempt in AssessmentAttempt.objects.filter(state=State.COMPLETED)
        if attempt.result.areas_needing_help
    ]
    items = FollowUp.objects.all()

    assert flagged and items.count() == len(flagged)
    assert items.filter(assignee=demo_staff_user).exists()
    assert items.filter(assignee__isnull=True).exists()
    assert FollowUpNote.objects.exists()
    assert items.exclude(status=FollowUp.Status.NEW).exists()
    assert any(item.is_overdue for item in items)
    assert all(
        item.created_at == item.attempt.completed_at for item in items.select_related("attempt")
    )


def test_older_routine_follow_ups_are_resolved_and_hold_no_records(seeded):
    today = timezone.localdate()
    resolved = FollowUp.objects.filter(status=FollowUp.Status.RESOLVED)
    learners = Learner.objects.filter(follow_ups__isnull=False).distinct()
    holds = {learner.pk: hold_of(learner, today=today) for learner in learners}

    assert resolved.exists() and not resolved.filter(resolved_at__isnull=True).exists()
    assert sum(not hold.held for hold in holds.values()) >= 1
    # Only an alert holds to the 25th birthday; a routine item only while open.
    alerted = set(Alert.objects.values_list("attempt__learner", flat=True))
    assert all(pk in alerted for pk, hold in holds.items() if hold.until is not None)


def test_the_demo_password_is_printed_once_and_never_logged(seeded, caplog):
    password = seeded.split("password: ")[1].split()[0]

    assert seeded.count(password) == 1
    assert "demo only" in seeded
    records = caplog.get_records("setup")  # the cohort is seeded by the fixture
    assert records and not any(password in record.getMessage() for record in records)
    learner = Learner.objects.filter(attempts__state=State.COMPLETED).first()
    assert learner.user.check_password(password)


def test_a_second_run_adds_nothing_and_says_so(seeded, upstream):
    counts = (Learner.objects.count(), AssessmentAttempt.objects.count(), FollowUp.objects.count())
    calls = upstream.state.count()

    output = seed(learners=COHORT, wait=5)

    assert "learners already exist, so nothing was seeded" in output
    assert counts == (
        Learner.objects.count(),
        AssessmentAttempt.objects.count(),
        FollowUp.objects.count(),
    )
    assert upstream.state.count() == calls


def test_it_seeds_nothing_into_a_portal_that_already_has_learners(upstream, demo_staff_user):
    make_learner("lee.learner", "u-lee")

    output = seed(learners=3, wait=1)

    assert "nothing was seeded" in output
    assert Learner.objects.count() == 1 and upstream.state.count() == 0


def test_it_gives_up_clearly_when_the_sandbox_does_not_answer(db, settings, demo_staff_user):
    settings.PARTNER_API_BASE_URL = "http://127.0.0.1:9/plapi/v1/partners"  # nothing listens

    with pytest.raises(CommandError, match="did not answer within 0.5 seconds"):
        seed(learners=3, wait=0.5)

    assert not Learner.objects.exists()


def test_it_creates_the_demo_staff_account_when_missing(db, upstream, tmp_path, monkeypatch):
    monkeypatch.setattr(demo_staff, "PASSWORD_FILE", tmp_path / "password")

    output = seed(learners=1, wait=5)

    staff = User.objects.get(username=demo_staff.DEMO_USERNAME)
    assert staff.groups.filter(name=STAFF_GROUP).exists()
    assert Learner.objects.get().registered_by == staff
    assert "Demo staff account" in output


def test_names_the_sandbox_already_holds_get_another_username(upstream, demo_staff_user):
    # A fresh portal beside a sandbox that kept its state (.sandbox-state.json).
    get_client().create_learner(
        username="amira.khan", password="Some-password-1", dob=date(2009, 1, 1)
    )

    seed(learners=1, wait=5)

    assert Learner.objects.get().username == "amira.khan2"


def test_the_demos_older_alerts_were_acknowledged_by_the_demo_lead(seeded, demo_staff_user):
    alerts = Alert.objects.exclude(kind=Alert.Kind.TEST)
    assert alerts.exists()
    day_ago = timezone.now() - timedelta(days=1)
    for alert in alerts:
        assert alert.raised_at == alert.attempt.completed_at
        if alert.raised_at < day_ago:
            assert alert.acknowledged_by == demo_staff_user
            assert timedelta(minutes=3) <= alert.acknowledged_at - alert.raised_at
            # The chronology says what the lead did, and when: as they took it on.
            (entry,) = alert.entries.all()
            assert alert.category and entry.action == "Spoke with the pupil"
            assert entry.created_at == alert.acknowledged_at
