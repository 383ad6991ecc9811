"""Follow-ups resolved before `resolved_at` existed get it, so holds follow the new rule."""

from datetime import date, timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from followups.models import FollowUp
from learners.models import Learner
from privacy.selectors import add_years, hold_of, kept_until

BEFORE = ("followups", "0007_history_and_resolved")

# JSON lookups in the audit trail's detail differ by backend.
pytestmark = pytest.mark.backend


def migrate_to_latest() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.fixture
def before_backfill(transactional_db):
    """The database with followups back at 0007 (resolved_at there, never filled), its models."""
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    layout = [node for node in executor.loader.graph.leaf_nodes() if node[0] != "followups"]
    yield MigrationExecutor(connection).loader.project_state([*layout, BEFORE]).apps
    migrate_to_latest()


def test_resolved_items_take_the_time_the_trail_says_they_were_resolved(before_backfill):
    old = before_backfill
    User = old.get_model("auth", "User")
    OldLearner = old.get_model("learners", "Learner")
    OldFollowUp = old.get_model("followups", "FollowUp")
    OldEvent = old.get_model("audit", "AuditEvent")
    user = User.objects.create(username="amira.k")
    learner = OldLearner.objects.create(
        user=user, username="amira.k", first_name="Amira", dob=date(2012, 5, 17),
        upstream_user_id="u-amira", status="active",
    )  # fmt: skip
    now = timezone.now()
    five_years_ago = now - timedelta(days=5 * 366)
    OldLearner.objects.filter(pk=learner.pk).update(registered_at=five_years_ago)

    def item(status: str):
        made = OldFollowUp.objects.create(
            learner=learner, status=status, risk_level="MODERATE", due_date=date(2021, 1, 1)
        )
        OldFollowUp.objects.filter(pk=made.pk).update(
            created_at=five_years_ago, updated_at=now - timedelta(days=30)
        )
        return made

    in_trail, not_in_trail, still_open = item("resolved"), item("resolved"), item("contacted")
    resolved_on = now - timedelta(days=4 * 366)

    def event(at, **detail):
        made = OldEvent.objects.create(
            actor_username="sam.staff", action="follow_up_changed", learner=learner,
            detail={"follow_up": in_trail.pk, **detail},
        )  # fmt: skip
        OldEvent.objects.filter(pk=made.pk).update(at=at)

    event(resolved_on - timedelta(days=9), changed=["status"], status="resolved")
    event(resolved_on - timedelta(days=5), changed=["status"], status="contacted")
    event(resolved_on, changed=["status", "assignee"], status="resolved")
    # A note added later repeats the status: not a resolving.
    event(now - timedelta(days=30), changed=[], status="resolved", note_added=True)

    migrate_to_latest()

    resolved_at = dict(FollowUp.objects.values_list("pk", "resolved_at"))
    assert resolved_at[in_trail.pk] == resolved_on
    assert resolved_at[not_in_trail.pk] == now - timedelta(days=30)
    assert resolved_at[still_open.pk] is None
    assert FollowUp.objects.get(pk=in_trail.pk).updated_at == now - timedelta(days=30)
    # The re-evaluated hold: the open item still holds, and once it is resolved too the
    # period runs from the latest resolving.
    pupil = Learner.objects.get(pk=learner.pk)
    assert hold_of(pupil, today=timezone.localdate()).open_follow_up
    FollowUp.objects.filter(pk=still_open.pk).update(status="resolved")
    hold = hold_of(pupil, today=timezone.localdate())
    assert not hold.held
    assert kept_until(pupil) == add_years(timezone.localdate(now - timedelta(days=30)), 3)
