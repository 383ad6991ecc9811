"""A read-only view of what the sandbox received, for load tests: submissions per assessment.

GET /_sandbox/submissions (with the apikey header) answers, for every assessment offered, how
many submissions the sandbox accepted (recorded and scored), how many resends it refused as
already submitted, and the answers it holds; and the statuses of every submit-assessment
request, injected failures included. It changes nothing, so a test may ask at any time.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from sandbox.state import SandboxState

SUBMISSIONS_PATH = "/_sandbox/submissions"


def submissions_report(state: SandboxState) -> dict[str, Any]:
    """Return, as JSON-ready data, what each assessment received and every submit's status."""
    with state.lock:
        accepted = Counter(state.submissions)
        refused = Counter(state.refused_resubmissions)
        statuses = Counter(
            str(status) for _, endpoint, status in state.requests if endpoint == "submit-assessment"
        )
        assessments = [
            {
                "assessment_id": offer.assessment_id,
                "user_id": offer.user_id,
                "accepted": accepted[offer.assessment_id],
                "refused_as_already_submitted": refused[offer.assessment_id],
                "answers": dict(offer.answers) if offer.answers is not None else None,
            }
            for offer in state.offers.values()
        ]
    return {"assessments": assessments, "submit_statuses": dict(statuses)}
