"""The score trend on a learner's page: a chart of LOA scores and what changed since last time."""

import re

import pytest

from assessments.models import AssessmentAttempt
from tests.browsing import browser_sign_in
from tests.factories import attempt, cohort_learner, completed

State = AssessmentAttempt.State


def trend_section(response) -> str:
    html = response.content.decode()
    return html.split('<section class="score-trend"')[1].split("</section>")[0]


def test_a_learner_without_completed_assessments_has_no_trend_and_the_page_says_so(
    staff_client,
):
    learner = cohort_learner(name="newcomer")
    attempt(learner, state=State.IN_PROGRESS)

    section = trend_section(staff_client.get(f"/learners/{learner.pk}/"))

    assert "Newcomer Pupil has no completed assessments yet, so there is no trend" in section
    assert "<svg" not in section


def test_one_completed_assessment_is_shown_in_words_with_nothing_to_compare(staff_client):
    learner = cohort_learner(name="once")
    completed(learner, "2026-09-10", score="62.5")

    section = trend_section(staff_client.get(f"/learners/{learner.pk}/"))

    assert "has completed one assessment so far (Study skills, 10 September 2026, LOA" in section
    assert "LOA score 62.5), so there is no trend yet and nothing to compare it with." in section
    assert "<svg" not in section


def test_the_trend_charts_each_completed_score_by_date_with_a_table_of_the_values(staff_client):
    learner = cohort_learner(name="grower")
    completed(learner, "2026-09-10", score="40.25", risk="HIGH")
    completed(learner, "2026-10-10", score="55", risk="MODERATE")
    completed(learner, "2026-11-10", score="71.5", risk="LOW")
    attempt(learner, state=State.IN_PROGRESS)  # not completed: not on the trend

    section = trend_section(staff_client.get(f"/learners/{learner.pk}/"))

    svg = re.search(r"<svg .*?</svg>", section, re.S).group(0)
    assert 'role="img"' in svg and 'aria-labelledby="trend-chart-title"' in svg
    assert "LOA score of Grower Pupil over the last 3 completed assessments</title>" in svg
    assert re.findall(r'class="point-label"[^>]*>([^<]+)<', svg) == ["40.25", "55", "71.5"]
    assert ">10 Sep</text>" in svg and ">10 Nov</text>" in svg and ">2026</text>" in svg
    assert len(re.findall(r'<circle class="trend-point"', svg)) == 3
    # Higher scores sit higher: a smaller y.
    heights = [int(y) for y in re.findall(r'<circle class="trend-point" cx="\d+" cy="(\d+)"', svg)]
    assert heights == sorted(heights, reverse=True)
    assert "<caption>LOA score of each completed assessment, oldest first</caption>" in section
    rows = re.findall(
        r'<th scope="row">([^<]+)</th><td[^>]*>[^<]+</td><td[^>]*>([^<]+)</td>', section
    )
    assert rows == [("10 Sep 2026", "40.25"), ("10 Oct 2026", "55"), ("10 Nov 2026", "71.5")]
    assert "style=" not in section


def test_it_says_which_focus_areas_changed_between_the_last_two_assessments(staff_client):
    learner = cohort_learner(name="changer")
    completed(learner, "2026-08-01", areas={"Sleep": "no", "Mood": "no"})  # too old to compare
    completed(
        learner,
        "2026-09-10",
        areas={"Time management": "yes", "Sleep": "no", "Focus": "yes", "Worry": "no"},
    )
    completed(
        learner,
        "2026-10-10",
        areas={"Time management": "no", "Sleep": "Yes", "Focus": "yes", "Worry": "NO", "New": "y"},
    )

    section = trend_section(staff_client.get(f"/learners/{learner.pk}/"))
    changes = dict(re.findall(r"<dt>([^<]+)</dt><dd>([^<]+)</dd>", section))

    assert "of 10 September 2026 with Study skills of 10 October 2026" in section
    assert changes == {
        "Newly needs help": "Sleep",
        "No longer needs help": "Time management",
        "Still needs help": "Focus",
        "Unchanged, no help needed": "Worry",
        "Reported only in the latest assessment": "New",
    }


def test_unchanged_areas_are_said_plainly(staff_client):
    learner = cohort_learner(name="steady")
    completed(learner, "2026-09-10", areas={"Sleep": "no"})
    completed(learner, "2026-10-10", areas={"Sleep": "no"})

    section = trend_section(staff_client.get(f"/learners/{learner.pk}/"))
    changes = dict(re.findall(r"<dt>([^<]+)</dt><dd>([^<]+)</dd>", section))

    assert changes == {
        "Newly needs help": "None",
        "No longer needs help": "None",
        "Still needs help": "None",
        "Unchanged, no help needed": "Sleep",
    }


def test_the_chart_shows_the_latest_six_and_the_table_every_score(staff_client):
    learner = cohort_learner(name="regular")
    for month in range(1, 9):
        completed(learner, f"2026-{month:02d}-15", score=str(10 * month))

    section = trend_section(staff_client.get(f"/learners/{learner.pk}/"))

    svg = re.search(r"<svg .*?</svg>", section, re.S).group(0)
    assert re.findall(r'class="point-label"[^>]*>([^<]+)<', svg) == [
        "30", "40", "50", "60", "70", "80"
    ]  # fmt: skip
    assert len(re.findall(r'<tr><th scope="row">', section)) == 8


def test_upstream_text_in_the_trend_stays_text(staff_client):
    learner = cohort_learner(name="hostile")
    completed(learner, "2026-09-10", areas={"<img src=x onerror=alert(1)>": "no"})
    completed(learner, "2026-10-10", areas={"<img src=x onerror=alert(1)>": "yes"},
              title="<script>alert(1)</script>")  # fmt: skip

    section = trend_section(staff_client.get(f"/learners/{learner.pk}/"))

    assert "<img src=x" not in section and "<script>" not in section
    assert "&lt;img src=x onerror=alert(1)&gt;" in section


INSIDE_JS = """(svg) => {
  // Every text of the chart, as drawn, against the chart's own box (half a pixel to spare).
  const chart = svg.getBoundingClientRect();
  return [...svg.querySelectorAll("text")].filter((text) => {
    const box = text.getBoundingClientRect();
    return box.left < chart.left - 0.5 || box.right > chart.right + 0.5
      || box.top < chart.top - 0.5 || box.bottom > chart.bottom + 0.5;
  }).map((text) => text.textContent);
}"""


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [360, 1280])
def test_the_charts_last_date_and_the_tables_caption_are_never_clipped(
    browser, live_server, staff, width
):
    learner = cohort_learner(name="grower")
    for day, score in [("2026-09-10", "40.25"), ("2026-10-10", "71.5"), ("2026-11-26", "23.75")]:
        completed(learner, day, score=score)
    page = browser.new_page(viewport={"width": width, "height": 800})
    browser_sign_in(page, live_server.url, staff.username)
    page.goto(f"{live_server.url}/learners/{learner.pk}/")
    svg = page.locator(".score-trend svg")
    last_date = svg.locator("text", has_text="26 Nov")

    assert svg.evaluate(INSIDE_JS) == []
    assert last_date.bounding_box()["x"] + last_date.bounding_box()["width"] <= (
        svg.bounding_box()["x"] + svg.bounding_box()["width"]
    )
    caption = page.locator(".score-trend caption")
    region = page.locator(".score-trend .table-scroll")
    assert caption.evaluate("(caption) => caption.scrollWidth <= caption.clientWidth")
    assert region.evaluate("(region) => region.scrollWidth <= region.clientWidth")
    caption_box, region_box = caption.bounding_box(), region.bounding_box()
    assert caption_box["x"] >= region_box["x"]
    assert caption_box["x"] + caption_box["width"] <= region_box["x"] + region_box["width"]
    page.close()
