"""Figures read one way on every page: grouped as the locale groups them, at most two decimals,
no trailing zeros (50, 45.45, 45.5, 1,234.5), for learners and staff alike."""

import re
from decimal import Decimal

import pytest
from django.template import Context, Template

from dashboard.disclosure import protect
from kit.numbers import number_text
from tests.factories import cohort_learner, completed, make_attempt, make_result


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (Decimal("50"), "50"),
        (Decimal("45.45"), "45.45"),
        (Decimal("45.5000"), "45.5"),
        (Decimal("0.1"), "0.1"),
        (Decimal("100.0000"), "100"),
        (Decimal("45.455"), "45.46"),  # rounded half up, as a reader expects
        (Decimal("45.4549"), "45.45"),
        (Decimal("1234.5"), "1,234.5"),
        (Decimal("-0.001"), "0"),
        (Decimal("0E-4"), "0"),
        (72, "72"),
        (12345, "12,345"),
        (45.45, "45.45"),
        (None, ""),
    ],
)
def test_a_number_reads_the_portals_one_way(value, shown):
    assert number_text(value) == shown
    assert Template("{% load portal_tags %}{{ value|number }}").render(
        Context({"value": value})
    ) == (shown)


def test_a_staff_page_shows_a_score_the_same_way(staff_client, learner):
    attempt = make_attempt(learner, assessment_id=42, state="submitted")
    result = make_result(attempt)
    result.loa_score = Decimal("45.4550")
    result.save()

    html = staff_client.get(f"/learners/{learner.pk}/attempts/42/").content.decode()

    assert '<dd class="score">45.46</dd>' in html


def test_the_score_trend_writes_its_scores_and_ticks_the_same_way(staff_client):
    learner = cohort_learner(name="grower")
    completed(learner, "2026-09-10", score="40.2500")
    completed(learner, "2026-10-10", score="55.125")

    html = staff_client.get(f"/learners/{learner.pk}/").content.decode()

    svg = re.search(r"<svg .*?</svg>", html, re.S).group(0)
    assert re.findall(r'class="point-label"[^>]*>([^<]+)<', svg) == ["40.25", "55.13"]
    ticks = re.findall(r'<text class="tick" [^>]*text-anchor="end">([^<]+)<', svg)
    assert all(len(tick.partition(".")[2]) <= 2 for tick in ticks), ticks
    rows = re.findall(r'<th scope="row">[^<]+</th><td[^>]*>[^<]+</td><td[^>]*>([^<]+)</td>', html)
    assert rows == ["40.25", "55.13"]


def test_the_dashboards_counts_are_grouped_the_same_way():
    assert protect("Learners assessed", 12345, min_size=5).text == "12,345"
    assert protect("Learners assessed", 3, min_size=1000).text == "fewer than 1,000"
