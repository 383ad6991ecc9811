"""Steps of a learner's journey shared by several test files."""

from datetime import date

from django.test import Client

from assessments.models import AssessmentAttempt
from assessments.taking import question_pages
from learners.models import Learner
from learners.services import learner_register

LEARNER_PASSWORD = "Bright-Window-Seat-3"


def register_pupil(staff, username: str = "pia.pupil", level: str = "") -> Learner:
    """Register a learner upstream through the portal's service (at a level, if given)."""
    return learner_register(
        username=username,
        password=LEARNER_PASSWORD,
        dob=date(2010, 2, 2),
        registered_by=staff,
        level=level,
    )


def attempt_url(attempt: AssessmentAttempt, tail: str = "") -> str:
    """Return the address of the attempt's pages, with `tail` (such as "check/") after it."""
    return f"/me/assessments/{attempt.assessment_id}/{tail}"


def page_url(attempt: AssessmentAttempt, number: int = 1) -> str:
    """Return the address of one question page of the attempt."""
    return f"/me/assessments/{attempt.assessment_id}/page/{number}/"


def answer_pages(client: Client, attempt: AssessmentAttempt, choice: int = 0, upto=None) -> None:
    """Answer every question on every page (or the first `upto` pages) with one choice."""
    for page in question_pages(attempt)[:upto]:
        data = {f"q{e.position}": e.question.answers[choice].id for e in page.questions}
        client.post(attempt_url(attempt, f"page/{page.number}/"), {**data, "continue": ""})


def ready_to_send(client: Client, learner: Learner) -> AssessmentAttempt:
    """Sign the learner in, start their assessment and answer every question."""
    client.force_login(learner.user)
    client.post("/me/start/")
    attempt = AssessmentAttempt.objects.get(
        learner=learner, state=AssessmentAttempt.State.IN_PROGRESS
    )
    answer_pages(client, attempt)
    return attempt


def page_showing(
    client: Client, path: str, marker: str, *, status: int = 200, data: dict | None = None
) -> str:
    """Return the page at `path`, having checked that it answered `status` and shows `marker`.

    A test that asserts something is absent from a page reads the page this way: a redirect, an
    error page or another page lacks the marker, so the absence cannot pass by looking elsewhere.
    """
    response = client.get(path, data)
    html = response.content.decode()
    assert response.status_code == status, f"{path} answered {response.status_code}"
    assert marker in html, f"{path} does not show {marker!r}"
    return html
