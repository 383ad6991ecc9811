"""Receivers of other apps' signals."""

from assessments.models import AssessmentResult
from followups.services import followup_open_for_result


def open_follow_up_on_result_stored(sender, *, result: AssessmentResult, **kwargs) -> None:
    """Open the follow-up of a freshly stored result that flags a focus area."""
    # Inside the storing transaction: if this fails, the result is not stored either, and
    # delivery tries again, so no flagged result is left without its item.
    followup_open_for_result(result=result)
