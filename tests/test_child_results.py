"""Results a child can read (issue 31, part 4): no score or risk label from the service's own
description or trait while the school keeps them from learners, and focus areas in the
portal's words.
"""

import re
from decimal import Decimal

import pytest

from assessments.child_words import focus_area_words, has_digit, mentions_score_or_risk
from assessments.models import AssessmentAttempt, AssessmentResult, FocusArea
from learners.models import Learner, Level
from schools.models import PartnerSettings
from tests.factories import make_attempt

State = AssessmentAttempt.State

RESULTS = "/me/assessments/42/results/"
QUOTING = "<p>The overall score is 50.00 out of 100, a Moderate level of need.</p>"
PLAIN = "<p>Sleep shapes how well you learn.</p>"
AREAS = (
    ("SLEEP & TIREDNESS", "yes"),
    ("EXAM ANXIETY", "yes"),
    ("CONFIDENCE", "no"),
    ("HANDWRITING SPEED", "yes"),
)


def finished_with(learner: Learner, description: str) -> AssessmentAttempt:
    """Give the learner attempt 42 with a result scored 50, "Moderate", quoting `description`."""
    attempt = make_attempt(learner, assessment_id=42, state=State.SUBMITTED)
    result = AssessmentResult.objects.create(
        attempt=attempt,
        loa_score=Decimal("50.00"),
        risk_level="Moderate",
        trait_title="The steady learner",
        trait_copy="You keep going.",
        result_description_html=description,
    )
    for name, needs_help in AREAS:
        FocusArea.objects.create(result=result, name=name, needs_help=needs_help, questions_count=2)
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(state=State.COMPLETED)
    return attempt


def school_chooses(learner: Learner, **choices) -> None:
    PartnerSettings.of(learner.school_id)
    PartnerSettings.objects.filter(school_id=learner.school_id).update(**choices)


def at_level(learner: Learner, level: str) -> None:
    Learner.objects.filter(pk=learner.pk).update(level=level)


def visible_text(html: str) -> str:
    """The page's text without scripts, tags or attributes."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def results_of(client) -> str:
    response = client.get(RESULTS)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="results-heading"' in html and "The steady learner" in html
    return html


def help_list(html: str) -> list[str]:
    listed = re.search(r'<ul class="help-areas">(.*?)</ul>', html, re.S)
    return re.findall(r"<li>(.*?)</li>", listed.group(1)) if listed else []


def shows_score_or_label(text: str) -> bool:
    return bool(re.search(r"(?<![\d.])50(?:[.,]\d+)?(?!\d)|moderate", text, re.IGNORECASE))


@pytest.mark.parametrize("level", [Level.PRIMARY, Level.SECONDARY, Level.FURTHER_EDUCATION])
@pytest.mark.parametrize("readers", ["older", "everyone"])
def test_a_description_quoting_the_score_never_reaches_a_learner_kept_from_scores(
    learner, learner_client, level, readers
):
    finished_with(learner, QUOTING)
    at_level(learner, level)
    school_chooses(learner, description_to_learners=readers)

    html = results_of(learner_client)

    assert "You keep going." in html
    assert "About these results" not in html and "About you" not in html
    assert not shows_score_or_label(visible_text(html)), visible_text(html)


@pytest.mark.parametrize(
    ("level", "readers", "shown"),
    [
        (Level.SECONDARY, "older", True),
        (Level.FURTHER_EDUCATION, "older", True),
        (Level.PRIMARY, "older", False),
        (Level.PRIMARY, "everyone", True),
        (Level.SECONDARY, "nobody", False),
    ],
)
def test_with_scores_shown_the_school_chooses_who_reads_the_description(
    learner, learner_client, level, readers, shown
):
    finished_with(learner, QUOTING)
    at_level(learner, level)
    school_chooses(learner, description_to_learners=readers, show_scores_to_learners=True)

    html = results_of(learner_client)

    assert '<dd class="score">50</dd>' in html  # the score is the school's to show here
    assert ("a Moderate level of need" in html) is shown


@pytest.mark.parametrize(
    ("level", "readers", "shown"),
    [
        (Level.SECONDARY, "older", True),
        (Level.PRIMARY, "older", False),
        (Level.PRIMARY, "everyone", True),
        (Level.FURTHER_EDUCATION, "nobody", False),
    ],
)
def test_a_description_without_the_score_follows_the_schools_choice(
    learner, learner_client, level, readers, shown
):
    finished_with(learner, PLAIN)
    at_level(learner, level)
    school_chooses(learner, description_to_learners=readers)

    html = results_of(learner_client)

    assert ("Sleep shapes how well you learn." in html) is shown


def test_a_primary_pupil_reads_focus_areas_in_child_words(learner, learner_client):
    finished_with(learner, PLAIN)
    at_level(learner, Level.PRIMARY)

    html = results_of(learner_client)

    assert help_list(html) == [
        "Sleep and feeling tired",
        "Feeling worried about tests",
        "Handwriting speed",
    ]
    assert "SLEEP" not in html and "EXAM ANXIETY" not in html


def test_an_older_learner_reads_focus_areas_in_their_own_words(learner, learner_client):
    finished_with(learner, PLAIN)
    at_level(learner, Level.SECONDARY)

    html = results_of(learner_client)

    assert help_list(html) == [
        "Sleep and tiredness",
        "Feeling anxious about exams",
        "Handwriting speed",
    ]


def test_staff_keep_the_services_names_and_description(learner, staff_client):
    attempt = finished_with(learner, QUOTING)
    at_level(learner, Level.PRIMARY)

    response = staff_client.get(f"/learners/{learner.pk}/attempts/{attempt.assessment_id}/")

    html = response.content.decode()
    assert response.status_code == 200, html[:2000]
    assert "SLEEP &amp; TIREDNESS" in html and "EXAM ANXIETY" in html
    assert "a Moderate level of need" in html


@pytest.mark.parametrize(
    ("name", "primary", "older"),
    [
        ("SLEEP & TIREDNESS", "Sleep and feeling tired", "Sleep and tiredness"),
        ("RETAINING & RECALLING INFORMATION", "Remembering things", "Remembering what you learn"),
        ("EXAM ANXIETY", "Feeling worried about tests", "Feeling anxious about exams"),
        ("FOCUS & MOTIVATION", "Paying attention", "Focus and motivation"),
        (
            "ORGANIZATION & TIME MANAGEMENT",
            "Getting organised",
            "Getting organised and managing time",
        ),
        ("STRESS & STRAIN", "Feeling stressed", "Stress and pressure"),
        ("CONFIDENCE", "Believing in yourself", "Confidence"),
        ("Sleep  and tiredness", "Sleep and feeling tired", "Sleep and tiredness"),
        ("TEAM WORK & SHARING", "Team work and sharing", "Team work and sharing"),
    ],
)
def test_every_known_focus_area_has_words_for_each_age(name, primary, older):
    assert focus_area_words(name, primary=True) == primary
    assert focus_area_words(name, primary=False) == older


@pytest.mark.parametrize(
    ("text", "quotes"),
    [
        ("<p>You scored 50.</p>", True),
        ("<p>You scored 50.0 overall.</p>", True),
        ("<p>You scored <b>50.00</b>.</p>", True),
        ("<p>A MODERATE need.</p>", True),
        ("<p>150 pupils took it; 5 of them moderately.</p>", False),
        ("<p>Sleep well.</p>", False),
    ],
)
def test_a_description_is_read_for_the_score_in_any_usual_spelling(text, quotes):
    assert mentions_score_or_risk(text, Decimal("50.00"), "Moderate") is quotes


@pytest.mark.parametrize(
    ("text", "quotes"),
    [
        ("<p>You scored 62 out of 100.</p>", True),  # rounded up
        ("<p>You scored 61 overall.</p>", True),  # cut
        ("<p>You scored 61.5.</p>", True),
        ("<p>You scored 61,50.</p>", True),
        ("<p>Sleep 9 hours; 60 minutes of reading.</p>", False),
    ],
)
def test_a_text_is_read_for_the_score_rounded_or_cut(text, quotes):
    assert mentions_score_or_risk(text, Decimal("61.50"), "Moderate") is quotes


def test_any_digit_in_a_description_is_noticed_but_not_in_its_tags():
    assert has_digit("<p>Top 40 percent</p>")
    assert not has_digit('<p class="h2">Sleep well.</p>')


def finished_with_trait(learner: Learner) -> None:
    """Give the learner attempt 42 scored 61.50, "Moderate", quoting both in its trait's parts."""
    attempt = make_attempt(learner, assessment_id=42, state=State.SUBMITTED)
    AssessmentResult.objects.create(
        attempt=attempt,
        loa_score=Decimal("61.50"),
        risk_level="Moderate",
        trait_title="Moderate worrier",
        trait_copy="You scored 62 out of 100.",
        trait_signs_html="<ul><li>Moderate tiredness</li><li>Yawning in class</li></ul>",
        trait_tips_html="<ul><li>Sleep nine hours</li></ul>",
        result_description_html="<p>Your result is 62 out of 100.</p>",
    )
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(state=State.COMPLETED)


@pytest.mark.parametrize("level", [Level.PRIMARY, Level.SECONDARY, Level.FURTHER_EDUCATION])
def test_trait_parts_quoting_the_score_or_label_never_reach_a_learner_kept_from_scores(
    learner, learner_client, level
):
    finished_with_trait(learner)
    at_level(learner, level)
    school_chooses(learner, description_to_learners="everyone")

    response = learner_client.get(RESULTS)

    assert response.status_code == 200
    text = visible_text(response.content.decode())
    assert "Sleep nine hours" in text  # the part that quotes neither stays
    assert "Your results" in text or "What your answers tell us" in text  # the portal's heading
    assert not re.search(r"(?<![\d.])6[12](?:[.,]\d+)?(?!\d)|moderate", text, re.I), text
    assert "Yawning in class" not in text  # its part quoted the label, so it went whole


def test_with_scores_shown_the_trait_reads_as_the_service_wrote_it(learner, learner_client):
    finished_with_trait(learner)
    school_chooses(learner, description_to_learners="everyone", show_scores_to_learners=True)

    response = learner_client.get(RESULTS)

    assert response.status_code == 200
    html = response.content.decode()
    assert "Moderate worrier" in html and "You scored 62 out of 100." in html
    assert "Yawning in class" in html and "Your result is 62 out of 100." in html
