"""An attempt's pages keep the layout they were stored with, and their words match it."""

import pytest

from assessments import page_markup
from assessments.models import AssessmentAttempt
from assessments.taking import PRIMARY_LEVEL, saved_answers
from schools.models import PartnerSettings
from tests.factories import make_attempt
from tests.journeys import attempt_url, page_showing, page_url, register_pupil

pytestmark = pytest.mark.backend

SECONDARY_LEVEL = "LOA_PARTNER_LEVEL2"


def school_settings(learner, **changes) -> None:
    """Change the learner's school's settings (saving drops the cached row)."""
    settings = PartnerSettings.load(learner.school_id)
    for name, value in changes.items():
        setattr(settings, name, value)
    settings.save()


def forget_rendered_pages() -> None:
    page_markup.cache.clear()
    page_markup.RECENT_PAGES.clear()


def first_answer(attempt: AssessmentAttempt, position: int) -> str:
    return attempt.questions[position - 1].answers[0].id


# The layout is fixed when the content is stored ---------------------------------------------


def test_switching_to_grouped_mid_attempt_keeps_the_pupils_pages_and_answers(
    client, staff, upstream
):
    pupil = register_pupil(staff, "pia.primary", level=PRIMARY_LEVEL)
    client.force_login(pupil.user)
    client.post("/me/start/")
    attempt = AssessmentAttempt.objects.get(learner=pupil)
    count = len(attempt.questions)
    assert attempt.one_per_screen is True and count >= 3
    response = client.post(page_url(attempt, 1), {"q1": first_answer(attempt, 1), "continue": ""})
    assert response.status_code == 302

    school_settings(pupil, primary_questions_grouped=True)
    forget_rendered_pages()

    # The last question still has its own page, and the page before it still saves.
    page_showing(client, page_url(attempt, count), f"Question {count} of {count}")
    autosave = client.post(
        attempt_url(attempt, "answers/"), {"page": "2", "q2": first_answer(attempt, 2)}
    )
    assert autosave.status_code == 200 and autosave.json()["saved"] is True
    third = {"q3": first_answer(attempt, 3), "continue": ""}
    response = client.post(page_url(attempt, 3), third)
    assert response.status_code == 302

    answers = saved_answers(attempt)
    assert [answers.get(q.id) for q in attempt.questions[:3]] == [
        first_answer(attempt, n) for n in (1, 2, 3)
    ]
    # A pupil starting now gets the school's new choice.
    other = register_pupil(staff, "gus.grouped", level=PRIMARY_LEVEL)
    client.force_login(other.user)
    client.post("/me/start/")
    assert AssessmentAttempt.objects.get(learner=other).one_per_screen is False


def test_switching_to_one_a_screen_mid_attempt_keeps_the_grouped_pages(client, pupil_attempt):
    pupil, attempt = pupil_attempt
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(one_per_screen=False)
    client.force_login(pupil.user)
    page_showing(client, page_url(attempt, 2), "Step 2 of 2")

    school_settings(pupil, primary_questions_grouped=False)
    forget_rendered_pages()

    html = page_showing(client, page_url(attempt, 1), "Step 1 of 2")
    assert html.count("<fieldset") == 2 and 'class="dots"' not in html
    assert client.get(page_url(attempt, 3)).status_code == 404


@pytest.fixture
def pupil_attempt(learner):
    learner.level = PRIMARY_LEVEL
    learner.save(update_fields=["level"])
    return learner, make_attempt(learner)  # three questions: two in "Sleep", one in "Study"


# Words follow the same level as the layout ---------------------------------------------------


def test_a_secondary_learner_given_a_primary_assessment_reads_it_in_childrens_words(
    client, learner
):
    learner.level = SECONDARY_LEVEL
    learner.save(update_fields=["level"])
    attempt = make_attempt(learner)
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(level=PRIMARY_LEVEL)
    client.force_login(learner.user)

    html = page_showing(client, page_url(attempt), "Question 1 of 3")

    assert "primary-questions one-question" in html and ">Next</button>" in html
    assert "You are signed in as" in html and "session." not in html
    check = page_showing(client, attempt_url(attempt, "check/"), "Check your answers")
    assert "You are signed in as" in check


def test_a_primary_pupil_given_a_secondary_assessment_reads_it_in_older_words(
    client, pupil_attempt
):
    pupil, attempt = pupil_attempt
    AssessmentAttempt.objects.filter(pk=attempt.pk).update(level=SECONDARY_LEVEL)
    client.force_login(pupil.user)

    html = page_showing(client, page_url(attempt), "Step 1 of 2")

    assert "primary-questions" not in html and "Save and continue" in html
    assert "s session." in html and "You are signed in as" not in html
    # Pages without an attempt keep the learner's own level.
    mine = page_showing(client, "/me/", "You are signed in as")
    assert "s session." not in mine
