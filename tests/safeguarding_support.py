"""Shared steps of the safeguarding tests: finishing an assessment with chosen labels."""

from django.test import Client

from assessments.models import AssessmentAttempt
from tests.journeys import attempt_url, ready_to_send


def finish_with_labels(upstream, pupil, *, needs_help=None, risk_level="Moderate"):
    """Answer and send a pupil's assessment; the sandbox labels its results as asked."""
    options = {"risk_level": risk_level}
    if needs_help is not None:
        options["needs_help"] = needs_help
    upstream.state.faults.add("results", "relabel", **options)
    client = Client()
    attempt = ready_to_send(client, pupil)
    client.post(attempt_url(attempt, "submit/"))
    attempt.refresh_from_db()
    assert attempt.state == AssessmentAttempt.State.COMPLETED, attempt.last_error
    return attempt
