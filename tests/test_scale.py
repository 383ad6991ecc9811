"""Scale: the generated cohort, and learner list pages whose cost does not grow with the data."""

import io
from collections import Counter

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from assessments.models import AssessmentAttempt, AssessmentResult, FocusArea, risk_rank
from demo.generator import generate_cohort
from followups.models import FollowUp
from followups.services import flagged_area_names, followup_due_date
from learners import views
from learners.models import Learner, Level
from learners.selectors import learner_list
from safeguarding.models import Alert
from sandbox.bank import FOCUS_AREAS
from sandbox.scoring import RISK_LEVELS

State = AssessmentAttempt.State

# The generator's tests compare every account and hash: no safeguarding lead added to them.
# The generator writes by COPY on PostgreSQL and by INSERT on SQLite (`backend`).
pytestmark = [pytest.mark.no_dsl, pytest.mark.backend]


def generate(learners: int = 60, attempts: int = 180, seed: int = 7) -> dict:
    return generate_cohort(learners, attempts, seed, io.StringIO(), batch=25)


def test_it_generates_learners_who_have_sign_in_accounts_and_realistic_records(db):
    counts = generate()

    learners = Learner.objects.all()
    assert counts["learners.Learner"] == learners.count() == 60
    assert User.objects.filter(learner__in=learners, is_active=True).count() == 60
    assert {learner.level for learner in learners} == {level.value for level in Level}
    assert all(learner.status == Learner.Status.ACTIVE for learner in learners)
    assert len({learner.username for learner in learners}) == 60
    assert all(learner.upstream_user_id.startswith("gen-") for learner in learners)
    assert all(learner.first_name and learner.last_name for learner in learners)
    # Registered over about two years, not all at the same instant.
    dates = sorted(learner.registered_at for learner in learners)
    assert (dates[-1] - dates[0]).days > 180


def test_every_generated_learner_shares_one_password_hash(db):
    generate_cohort(5, 0, 1, io.StringIO(), password="shared-secret-pass")

    hashes = set(User.objects.values_list("password", flat=True))
    assert len(hashes) == 1
    assert User.objects.first().check_password("shared-secret-pass")


def test_attempts_come_in_a_realistic_mix_with_results_for_completed_ones(db):
    generate(learners=200, attempts=600)

    states = Counter(AssessmentAttempt.objects.values_list("state", flat=True))
    assert sum(states.values()) == 600
    assert 0.7 < states[State.COMPLETED] / 600 < 0.85
    assert states[State.IN_PROGRESS] and states[State.AVAILABLE] and states[State.REJECTED]
    assert states[State.SUBMIT_PENDING] and states[State.SUBMITTED]
    results = AssessmentResult.objects.all()
    assert results.count() == states[State.COMPLETED]
    assert not results.exclude(attempt__state=State.COMPLETED).exists()
    assert set(results.values_list("risk_level", flat=True)) <= set(RISK_LEVELS)
    assert FocusArea.objects.count() == 7 * results.count()
    assert set(FocusArea.objects.values_list("name", flat=True)) == set(FOCUS_AREAS)
    assert set(FocusArea.objects.values_list("needs_help", flat=True)) == {"yes", "no"}
    flagged = results.filter(focus_areas__needs_help="yes").distinct().count()
    assert 0.2 < flagged / results.count() < 0.4


def test_a_learner_has_at_most_one_open_attempt_and_it_is_the_latest(db):
    generate(learners=100, attempts=300)

    finished = (State.COMPLETED, State.REJECTED)
    for learner in Learner.objects.prefetch_related("attempts"):
        history = list(learner.attempts.all())  # newest first
        assert all(attempt.state in finished for attempt in history[1:])
        assert all(a.offered_at >= learner.registered_at for a in history)


def test_follow_ups_are_opened_as_the_follow_up_rules_would_open_them(db):
    generate(learners=100, attempts=300)

    results = AssessmentResult.objects.select_related("attempt").prefetch_related("focus_areas")
    flagged = [result for result in results if flagged_area_names(result)]
    assert flagged
    assert FollowUp.objects.count() == len(flagged)
    for result in flagged:
        item = FollowUp.objects.prefetch_related("areas").get(attempt=result.attempt)
        assert item.learner_id == result.attempt.learner_id
        assert [area.name for area in item.areas.all()] == flagged_area_names(result)
        assert item.risk_level == result.risk_level
        assert item.risk_rank == risk_rank(result.risk_level)
        assert item.due_date == followup_due_date(opened_at=result.received_at)


def test_resolved_items_say_when_and_priority_ones_come_with_their_alert(db):
    generate(learners=100, attempts=300)

    resolved = FollowUp.objects.filter(status=FollowUp.Status.RESOLVED)
    assert resolved.exists() and not resolved.filter(resolved_at__isnull=True).exists()
    assert all(item.created_at < item.resolved_at <= timezone.now() for item in resolved)
    assert not FollowUp.objects.exclude(status=FollowUp.Status.RESOLVED).exclude(
        resolved_at__isnull=True
    )
    priority = FollowUp.objects.filter(priority=True)
    assert priority.exists()
    for item in priority:
        (alert,) = Alert.objects.filter(follow_up=item)
        assert (alert.attempt_id, alert.learner_id) == (item.attempt_id, item.learner_id)
        assert alert.reason == Alert.Reason.PRIORITY and alert.acknowledged_at is not None
    assert Alert.objects.count() == priority.count()
    # The leads' banner counts nothing waiting: the generator sends no email.
    assert not Alert.objects.filter(acknowledged_at__isnull=True).exists()


def test_the_same_seed_generates_the_same_cohort(db):
    generate(learners=10, attempts=30, seed=11)
    first = list(Learner.objects.order_by("pk").values_list("first_name", "last_name", "level"))
    call_command("generate_cohort", "--clear", stdout=io.StringIO())
    generate(learners=10, attempts=30, seed=11)
    again = list(Learner.objects.order_by("pk").values_list("first_name", "last_name", "level"))
    assert first == again


def test_the_command_refuses_a_database_with_learners_unless_told_yes(learner):
    with pytest.raises(CommandError, match="already has 1 learners"):
        call_command("generate_cohort", "--learners", "5", "--attempts", "10")
    call_command("generate_cohort", "--learners", "5", "--attempts", "10", "--yes",
                 stdout=io.StringIO())  # fmt: skip
    assert Learner.objects.count() == 6


def test_the_command_prints_progress_and_what_it_made(db):
    out = io.StringIO()
    call_command("generate_cohort", "--learners", "30", "--attempts", "90", "--batch", "10",
                 stdout=out)  # fmt: skip
    printed = out.getvalue()
    assert "10/30 learners" in printed and "30/30 learners" in printed
    assert "Learner 30" in printed and "AssessmentAttempt 90" in printed


def test_clear_removes_only_generated_learners_and_their_records(learner, staff):
    AssessmentAttempt.objects.create(learner=learner, assessment_id=1, state=State.COMPLETED)
    generate(learners=20, attempts=60)

    out = io.StringIO()
    call_command("generate_cohort", "--clear", stdout=out)

    assert "Deleted 20 generated learners" in out.getvalue()
    assert list(Learner.objects.all()) == [learner]
    assert list(AssessmentAttempt.objects.values_list("learner", flat=True)) == [learner.pk]
    assert not FocusArea.objects.exists() and not FollowUp.objects.exists()
    assert not Alert.objects.exists()
    assert set(User.objects.values_list("username", flat=True)) == {"lee.learner", "sam.staff"}


def list_queries(client, path: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(path).status_code == 200
    return len(captured.captured_queries)


@pytest.mark.parametrize(
    "path",
    [
        "/learners/",
        "/learners/?page=2",
        "/learners/?q=example",
        "/learners/?level=LOA_PARTNER_LEVEL2",
        "/learners/?q=learners+e&level=LOA_PARTNER_LEVEL1",
        "/learners/?sort=registered&page=2",
        "/learners/?status=completed&needs_help=yes&sort=risk",
        "/learners/?risk=moderate&sort=result",
        "/learners/?q=e&status=completed&sort=registered",
    ],
)
def test_the_learner_list_runs_the_same_queries_whatever_the_data_and_page_size(
    staff_client, monkeypatch, django_assert_num_queries, path
):
    generate(learners=8, attempts=20, seed=1)
    monkeypatch.setattr(views, "PAGE_SIZE", 5)
    staff_client.get(path)  # the first request after signing in also saves the session
    small = list_queries(staff_client, path)

    generate(learners=150, attempts=450, seed=2)
    monkeypatch.setattr(views, "PAGE_SIZE", 50)
    with django_assert_num_queries(small):
        response = staff_client.get(path)
    assert len(response.context["page"].object_list) > 5


def test_a_page_shows_its_learners_in_name_order_with_their_latest_state_and_risk(staff_client):
    generate(learners=80, attempts=240)

    page = staff_client.get("/learners/?page=2").context["page"]
    shown = [(row.pk, row.latest_state, row.latest_risk_level) for row in page.object_list]

    expected = [(row.pk, row.latest_state, row.latest_risk_level) for row in learner_list()[25:50]]
    assert shown == expected and len(shown) == 25
    names = [(row.last_name, row.first_name, row.username) for row in page.object_list]
    assert names == sorted(names)
    assert any(state for _, state, _ in shown) and any(risk for _, _, risk in shown)


@pytest.mark.parametrize("word", ["ar", "arn"])  # without and with a trigram to match
def test_search_results_come_in_name_order_across_pages(staff_client, word):
    generate(learners=150, attempts=0)

    pages = [staff_client.get("/learners/", {"q": word, "page": n}).context["page"] for n in (1, 2)]
    rows = [row for page in pages for row in page.object_list]
    names = [(row.last_name, row.first_name, row.username) for row in rows]
    assert len(rows) > 25 and names == sorted(names)
    found = (f"{r.username} {r.first_name} {r.last_name} {r.email}".upper() for r in rows)
    assert all(word.upper() in text for text in found)


def test_time_pages_reports_each_learner_list_page(staff_client):
    generate(learners=30, attempts=60)
    out = io.StringIO()

    call_command("time_pages", "--runs", "2", "--page", "list, page 1", "--page", "level filter",
                 stdout=out)  # fmt: skip

    table = out.getvalue()
    assert "| list, page 1 | `/learners/` | 200 |" in table
    assert "| level filter | `/learners/?level=LOA_PARTNER_LEVEL2` | 200 |" in table


postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="trigram indexes exist on PostgreSQL only"
)


@postgresql_only
def test_word_search_can_use_the_trigram_indexes(staff_client):
    generate(learners=40, attempts=0)
    query = Learner.objects.filter(last_name__icontains="khan")
    with connection.cursor() as cursor:
        # On a tiny table a scan is cheaper: forbid the alternatives to show the index serves.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexscan = off")
        sql, params = query.query.sql_with_params()
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "learner_last_name_trgm_idx" in plan


def test_the_dashboard_read_model_counts_the_generated_results(db):
    from dashboard.models import CohortResult

    generate(learners=40, attempts=120)

    assert CohortResult.objects.count() == AssessmentResult.objects.count() > 0
    latest = CohortResult.objects.filter(superseded_at__isnull=True).count()
    assert latest == Learner.objects.filter(attempts__state=State.COMPLETED).distinct().count()
