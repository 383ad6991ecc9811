"""The cohort dashboard: counts by event date, latest results, small groups, charts, queries."""

import re
from datetime import timedelta
from html import unescape as html_text

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from assessments.models import AssessmentAttempt, AssessmentResult
from assessments.signals import result_stored
from dashboard.cohort import cohort_rebuild
from dashboard.disclosure import protect_parts
from dashboard.models import CohortResult
from dashboard.selectors import CohortFilters, risk_distribution
from learners.models import Learner, Level
from privacy.services import learner_erase
from tests.factories import at, attempt, cohort_learner, completed
from tests.journeys import attempt_url, ready_to_send, register_pupil

State = AssessmentAttempt.State


@pytest.fixture
def exact(settings):
    """Show every count exactly, so tests of the counting itself read plainly."""
    settings.DASHBOARD_MIN_GROUP_SIZE = 1


def figures(response) -> dict[str, str]:
    """Return the headline figures of the page: label -> text shown."""
    html = response.content.decode()
    pairs = re.findall(
        r'headline-count[^"]*">([^<]+)</span>\s*<span class="headline-label">(?:<a [^>]+>)?([^<]+)',
        html,
    )
    return {label: text for text, label in pairs}


def table_rows(response, caption: str) -> dict[str, str]:
    """Return the rows of the table with this caption: row header -> cell."""
    html = response.content.decode()
    table = html.split(f"<caption>{caption}</caption>")[1].split("</table>")[0]
    rows = re.findall(r'<th scope="row">(.*?)</th><td>(.*?)</td>', table)
    return {
        html_text(re.sub(r"<[^>]+>", "", head)).replace(": follow-ups", ""): cell
        for head, cell in rows
    }


def test_it_counts_learners_registered_assessed_in_progress_and_waiting(staff_client, exact):
    done, busy, waiting, new = (cohort_learner() for _ in range(4))
    completed(done, "2026-09-10")
    completed(done, "2026-09-20")  # a second completion is still one learner assessed
    attempt(busy, state=State.IN_PROGRESS)
    attempt(new, state=State.AVAILABLE)
    attempt(waiting, state=State.SUBMIT_PENDING, submitted="2026-09-03")
    attempt(waiting, state=State.SUBMITTED, submitted="2026-09-04")
    attempt(waiting, state=State.REJECTED, submitted="2026-09-04")  # refused: not waiting

    response = staff_client.get("/dashboard/")

    assert response.status_code == 200
    assert figures(response) == {
        "Learners registered": "4",
        "Learners assessed": "1",
        "Learners with an assessment in progress": "2",
        "Assessments waiting to be delivered": "2",
    }


@pytest.mark.backend  # time windows
def test_the_date_range_applies_to_the_date_of_each_figures_own_event(staff_client, exact):
    early = cohort_learner(registered="2026-08-01")
    late = cohort_learner(registered="2026-10-15")
    completed(early, "2026-09-10")  # registered before the range, assessed inside it
    completed(late, "2026-10-20")  # assessed after the range
    attempt(late, state=State.IN_PROGRESS, offered="2026-09-15")
    attempt(early, state=State.SUBMIT_PENDING, offered="2026-09-05", submitted="2026-11-01")
    # Not yet sent: its offer date is the one that counts.
    attempt(late, state=State.SUBMITTING, offered="2026-09-06")

    response = staff_client.get("/dashboard/", {"from": "2026-09-01", "to": "2026-09-30"})

    assert figures(response) == {
        "Learners registered": "0",
        "Learners assessed": "1",
        "Learners with an assessment in progress": "1",
        "Assessments waiting to be delivered": "1",
    }
    assert "Showing all levels, from 1 September 2026, to 30 September 2026." in (
        response.content.decode()
    )


@pytest.mark.backend  # time windows
def test_the_to_date_includes_the_whole_of_that_day(staff_client, exact):
    completed(cohort_learner(), "2026-09-30", hour=23)

    response = staff_client.get("/dashboard/", {"to": "2026-09-30"})

    assert figures(response)["Learners assessed"] == "1"
    response = staff_client.get("/dashboard/", {"to": "2026-09-29"})
    assert figures(response)["Learners assessed"] == "0"


def test_the_level_filter_counts_only_learners_of_that_level(staff_client, exact):
    completed(cohort_learner(level=Level.PRIMARY), "2026-09-10", risk="LOW")
    completed(cohort_learner(level=Level.SECONDARY), "2026-09-10", risk="HIGH")
    cohort_learner(level=Level.SECONDARY)

    response = staff_client.get("/dashboard/", {"level": Level.SECONDARY})

    assert figures(response)["Learners registered"] == "2"
    assert figures(response)["Learners assessed"] == "1"
    assert table_rows(response, "Learners by risk level") == {
        "HIGH": "1",
        "All learners assessed": "1",
    }


@pytest.mark.backend  # latest result
def test_risk_levels_count_each_learners_latest_result_within_the_range(staff_client, exact):
    improving = cohort_learner()
    completed(improving, "2026-09-05", risk="HIGH")
    completed(improving, "2026-10-05", risk="LOW")
    steady = cohort_learner()
    completed(steady, "2026-09-06", risk="MODERATE")

    everything = staff_client.get("/dashboard/")
    september = staff_client.get("/dashboard/", {"from": "2026-09-01", "to": "2026-09-30"})

    assert table_rows(everything, "Learners by risk level") == {
        "MODERATE": "1",
        "LOW": "1",
        "All learners assessed": "2",
    }
    assert table_rows(september, "Learners by risk level") == {
        "HIGH": "1",
        "MODERATE": "1",
        "All learners assessed": "2",
    }


def test_needs_help_counts_learners_not_attempts_and_takes_any_no_as_all_clear(staff_client, exact):
    first, second, third = cohort_learner(), cohort_learner(), cohort_learner()
    completed(first, "2026-09-01", areas={"Time management": "yes", "Sleep": "yes"})
    completed(first, "2026-09-02", areas={"Time management": "Yes", "Sleep": "No"})
    completed(second, "2026-09-03", areas={"Time management": "a little", "Sleep": "NO"})
    completed(third, "2026-09-03", areas={"Time management": " no ", "Sleep": "no"})

    response = staff_client.get("/dashboard/")

    # Sleep needs no help in anyone's latest results: an area no one needs help in is left out.
    assert table_rows(response, "Learners needing help, by focus area") == {"Time management": "2"}


def test_erased_learners_count_in_the_totals(staff_client, staff, exact):
    kept, erased = cohort_learner(), cohort_learner()
    completed(kept, "2026-09-10", risk="LOW")
    completed(erased, "2026-09-10", risk="HIGH")
    learner_erase(learner=erased, erased_by=staff)
    pending = Learner.objects.create(
        user=User.objects.create_user("half.done"), username="half.done"
    )  # a registration that never reached the upstream is not a learner yet
    assert pending.status == Learner.Status.PENDING

    response = staff_client.get("/dashboard/")

    assert figures(response)["Learners registered"] == "2"
    assert figures(response)["Learners assessed"] == "2"
    assert table_rows(response, "Learners by risk level")["HIGH"] == "1"


def test_small_groups_are_shown_as_fewer_than_5_in_figures_tables_and_charts(staff_client):
    for _ in range(6):
        completed(cohort_learner(), "2026-09-10", risk="HIGH", areas={"Sleep": "yes"})
    for _ in range(2):
        completed(cohort_learner(), "2026-09-10", risk="LOW", areas={"Sleep": "no"})

    response = staff_client.get("/dashboard/")
    html = response.content.decode()

    assert figures(response)["Learners registered"] == "8"
    assert table_rows(response, "Learners needing help, by focus area") == {"Sleep": "6"}
    risk = table_rows(response, "Learners by risk level")
    # LOW (2) is small; HIGH (6) is withheld too, or 8 - 6 would give LOW away.
    assert risk == {"HIGH": "not shown", "LOW": "fewer than 5", "All learners assessed": "8"}
    chart = html.split('aria-labelledby="risk-chart-title"')[1].split("</svg>")[0]
    assert ">fewer than 5</text>" in chart and ">not shown</text>" in chart
    assert ">2<" not in chart and ">6<" not in chart
    # Withheld bars are the same short stub whatever the count behind them.
    assert re.findall(r'class="bar bar-withheld"[^>]*width="(\d+)"', chart) == ["10", "10"]


def test_operational_counts_are_exact_while_outcomes_stay_protected(staff_client):
    # Learners assessed counts who has finished, shown learner by learner on the learner list
    # and the class page: exact. Beside that exact small total, the risk levels and focus
    # areas would tell how each one did, so they are not broken down at all.
    assessed, busy, waiting = (cohort_learner() for _ in range(3))
    completed(assessed, "2026-09-10", risk="HIGH", areas={"Sleep": "yes"})
    attempt(busy, state=State.IN_PROGRESS)
    attempt(waiting, state=State.SUBMIT_PENDING, submitted="2026-09-03")

    response = staff_client.get("/dashboard/")

    assert figures(response) == {
        "Learners registered": "3",
        "Learners assessed": "1",
        "Learners with an assessment in progress": "1",
        "Assessments waiting to be delivered": "1",
    }
    html = response.content.decode()
    assert "so their risk levels and focus areas are not shown" in html
    assert "<caption>Learners by risk level</caption>" not in html
    assert "Learners needing help, by focus area</caption>" not in html
    assert "HIGH" not in html and "Sleep" not in html


def test_a_group_the_size_of_the_setting_is_shown_exactly(staff_client, settings):
    settings.DASHBOARD_MIN_GROUP_SIZE = 3
    for _ in range(3):
        completed(cohort_learner(), "2026-09-10", risk="HIGH")
    cohort_learner()

    response = staff_client.get("/dashboard/")

    assert figures(response)["Learners registered"] == "4"
    assert figures(response)["Learners assessed"] == "3"
    assert figures(response)["Learners with an assessment in progress"] == "0"
    assert "fewer than 3" not in table_rows(response, "Learners by risk level").values()


@pytest.mark.parametrize(
    ("parts", "shown"),
    [
        ([("A", 10), ("B", 0)], ["10", "0"]),
        ([("A", 10), ("B", 3)], ["not shown", "fewer than 5"]),
        ([("A", 20), ("B", 8), ("C", 2)], ["20", "not shown", "fewer than 5"]),
        # Two small parts adding up to 5 or more: neither can be worked out.
        ([("A", 20), ("B", 3), ("C", 4)], ["20", "fewer than 5", "fewer than 5"]),
        # Two small parts adding up to less than 5: a third is withheld.
        (
            [("A", 20), ("B", 9), ("C", 1), ("D", 2)],
            ["20", "not shown", "fewer than 5", "fewer than 5"],
        ),
        ([("A", 3)], ["fewer than 5"]),
    ],
)
def test_no_withheld_part_can_be_worked_out_from_the_total(parts, shown):
    assert [figure.text for figure in protect_parts(parts, min_size=5)] == shown


def test_invalid_filters_are_explained_and_the_page_shows_every_learner(staff_client, exact):
    cohort_learner(registered="2026-08-01")

    response = staff_client.get(
        "/dashboard/", {"from": "2026-09-30", "to": "2026-09-01", "level": "LOA_PARTNER_LEVEL2"}
    )
    html = response.content.decode()

    assert response.status_code == 200
    assert "There is a problem" in html
    assert "The To date must be the same as the From date or later." in html
    assert "these figures are for all learners at every date" in html
    assert figures(response)["Learners registered"] == "1"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"from": "2026-02-30"}, "Enter the From date as a real date, like 2026-09-01."),
        ({"to": "yesterday"}, "Enter the To date as a real date, like 2026-09-01."),
        ({"from": "0001-01-01"}, "Enter a From date from the years 1900 to 2999."),
        ({"level": "LEVEL9"}, "Choose a level from the list"),
    ],
)
def test_each_bad_filter_gets_a_clear_message(staff_client, query, message):
    response = staff_client.get("/dashboard/", query)

    assert response.status_code == 200
    assert message in response.content.decode()


def test_charts_are_labelled_svg_images_with_data_tables_and_no_inline_style(staff_client, exact):
    completed(cohort_learner(), "2026-09-10", areas={"<b>Time</b> & management": "yes"})

    html = staff_client.get("/dashboard/").content.decode()

    for chart_id in ("risk-chart", "needs-help-chart"):
        svg = re.search(rf'<svg [^>]*aria-labelledby="{chart_id}-title"[^>]*>', html).group(0)
        assert 'role="img"' in svg and "viewBox=" in svg and 'width="100%"' in svg
        assert f'<title id="{chart_id}-title">' in html
    assert "<caption>Learners by risk level</caption>" in html
    assert "<caption>Learners needing help, by focus area</caption>" in html
    assert "style=" not in html and "<style" not in html and "<script" not in html
    assert "&lt;b&gt;Time&lt;/b&gt; &amp; management" in html  # upstream text stays text
    assert "<b>Time" not in html
    assert "/static/css/portal.css" in html  # the charts are styled there


def test_figures_link_to_the_matching_follow_ups_and_lists(staff_client, exact):
    completed(cohort_learner(), "2026-09-10", risk="HIGH")

    html = staff_client.get("/dashboard/", {"level": Level.SECONDARY}).content.decode()

    assert 'href="/follow-ups/?area=Time+management&amp;level=LOA_PARTNER_LEVEL2"' in html
    assert 'href="/follow-ups/?risk=HIGH&amp;level=LOA_PARTNER_LEVEL2"' in html
    assert 'href="/learners/?level=LOA_PARTNER_LEVEL2"' in html
    assert 'href="/operations/"' in html


def test_the_results_export_link_carries_the_filters_in_force(staff_client):
    html = staff_client.get(
        "/dashboard/", {"level": Level.PRIMARY, "from": "2026-09-01"}
    ).content.decode()

    assert (
        'href="/learners/results.csv?level=LOA_PARTNER_LEVEL3&amp;from=2026-09-01&amp;to="' in html
    )


def _grow_cohort(size: int) -> None:
    for i in range(size):
        learner = cohort_learner(level=[Level.PRIMARY, Level.SECONDARY][i % 2])
        completed(learner, "2026-09-10", risk=["HIGH", "LOW", "ODD"][i % 3])
        completed(learner, "2026-09-12", areas={f"Area {i % 4}": "yes"})
        attempt(learner, state=State.IN_PROGRESS)
        attempt(learner, state=State.SUBMIT_PENDING)


@pytest.mark.parametrize(
    "query", [{}, {"level": Level.PRIMARY, "from": "2026-09-01", "to": "2026-09-30"}]
)
@pytest.mark.backend  # query count
def test_the_dashboard_runs_the_same_queries_whatever_the_data_size(
    staff_client, django_assert_num_queries, query
):
    # Three for every staff page (session, user with learner and staff role, the upstream
    # banner), one more (whether a DSL can be emailed, so assessments are open) and, for a
    # safeguarding lead, two for their banner (alerts waiting, emails not sent); then learners
    # registered, attempts under way or waiting, risk levels, focus areas and the lead's time
    # to acknowledge alerts. Two more since schools: the user's school roles (read with the
    # user) and the partner's schools (once a request); a shared cache keeps both. One more
    # since classes: the class menu, which the "By class" table reuses (with no class, its
    # grouped counts need no query; tests/test_class_filter_dashboard.py counts them).
    expected = 14
    staff_client.get("/dashboard/")  # the session's activity time is saved now, not below
    # At least DASHBOARD_MIN_GROUP_SIZE assessed at each level: with fewer, the results are
    # not broken down, and the focus areas are not read.
    _grow_cohort(10)
    with django_assert_num_queries(expected):
        assert staff_client.get("/dashboard/", query).status_code == 200
    _grow_cohort(20)
    with django_assert_num_queries(expected):
        assert staff_client.get("/dashboard/", query).status_code == 200


def test_a_result_stored_by_delivery_is_counted_at_once(staff_client, exact):
    learner = cohort_learner()
    result = completed(learner, "2026-09-10", risk="HIGH", count_it=False)
    assert (
        "No learner has completed an assessment" in staff_client.get("/dashboard/").content.decode()
    )

    result_stored.send(sender=AssessmentResult, result=result)

    assert table_rows(staff_client.get("/dashboard/"), "Learners by risk level") == {
        "HIGH": "1",
        "All learners assessed": "1",
    }


@pytest.mark.backend  # bulk rebuild
def test_a_rebuild_counts_results_loaded_behind_the_portals_back(staff_client, exact):
    learner = cohort_learner()
    completed(learner, "2026-09-10", risk="HIGH", count_it=False)
    completed(learner, "2026-09-11", risk="LOW", count_it=False)

    assert cohort_rebuild() == 2

    rows = table_rows(staff_client.get("/dashboard/"), "Learners by risk level")
    assert rows == {"LOW": "1", "All learners assessed": "1"}


@pytest.mark.backend  # latest result
def test_the_latest_result_in_any_window_matches_a_plain_reading_of_the_records(db):
    # Three results a learner, some on the same day, against windows with and without ends.
    days = ["2026-09-01", "2026-09-05", "2026-09-05", "2026-09-10", "2026-09-20"]
    risks = ["HIGH", "LOW", "MODERATE", "ODD"]
    for number in range(12):
        learner = cohort_learner(level=[Level.PRIMARY, Level.SECONDARY][number % 2])
        for step in range(3):
            day = days[(number + step * 2) % len(days)]
            completed(learner, day, risk=risks[(number * step) % 4], hour=9 + step, count_it=False)
    cohort_rebuild()
    bounds = [
        None,
        at("2026-09-01", 0),
        at("2026-09-05", 10),
        at("2026-09-10", 12),
        at("2026-10-01"),
    ]
    for start in bounds:
        for end in bounds:
            for level in ("", Level.PRIMARY):
                window = CohortFilters(level=level, start=start, end=end)
                assert dict(risk_distribution(window)) == _plain_latest_risks(window), window


def _plain_latest_risks(window: CohortFilters) -> dict[str, int]:
    """Count each learner's latest result in the window the slow, obvious way."""
    latest: dict[int, AssessmentResult] = {}
    for result in AssessmentResult.objects.select_related("attempt__learner"):
        done = result.attempt.completed_at
        if window.level and result.attempt.learner.level != window.level:
            continue
        if (window.start and done < window.start) or (window.end and done >= window.end):
            continue
        best = latest.get(result.attempt.learner_id)
        if best is None or (done, result.pk) > (best.attempt.completed_at, best.pk):
            latest[result.attempt.learner_id] = result
    counts: dict[str, int] = {}
    for result in latest.values():
        counts[result.risk_level] = counts.get(result.risk_level, 0) + 1
    return counts


def test_erasing_a_learner_keeps_their_results_in_the_counts(staff, db):
    learner = cohort_learner()
    completed(learner, "2026-09-10", risk="HIGH")

    learner_erase(learner=learner, erased_by=staff)

    assert CohortResult.objects.get().risk_level == "HIGH"


def test_learners_and_strangers_cannot_see_the_dashboard(client, learner):
    assert client.get("/dashboard/").status_code == 302
    client.force_login(learner.user)
    assert client.get("/dashboard/").status_code == 404


def test_an_empty_portal_says_there_is_nothing_to_show(staff_client):
    html = staff_client.get("/dashboard/").content.decode()

    assert "No learner has completed an assessment within these filters." in html
    assert figures(staff_client.get("/dashboard/"))["Learners registered"] == "0"


def test_the_window_of_a_day_starts_and_ends_at_local_midnight(staff):
    from dashboard.forms import CohortFilterForm

    form = CohortFilterForm({"from": "2026-07-01", "to": "2026-07-01"}, user=staff)
    window = form.cohort_filters()

    assert window.start == at("2026-07-01", 0)
    assert window.end - window.start == timedelta(days=1)


def test_an_assessment_taken_through_the_sandbox_shows_on_the_dashboard(
    client, staff, upstream, exact
):
    learner = register_pupil(staff, "dana.dash")
    attempt = ready_to_send(client, learner)
    client.post(attempt_url(attempt, "submit/"))
    attempt.refresh_from_db()
    assert attempt.state == State.COMPLETED
    result = attempt.result
    flagged = {area.name for area in result.focus_areas.all() if area.needs_help_flagged}

    client.force_login(staff)
    response = client.get("/dashboard/")

    assert figures(response)["Learners assessed"] == "1"
    assert table_rows(response, "Learners by risk level")[result.risk_level] == "1"
    areas = table_rows(response, "Learners needing help, by focus area")
    assert areas == {name: "1" for name in flagged}
    today = timezone.localdate().isoformat()
    assert figures(client.get("/dashboard/", {"from": today}))["Learners assessed"] == "1"
