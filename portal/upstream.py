"""What to tell a person when the assessment service fails: one wording for every page."""

from portal.partner_api import (
    PartnerApiBadResponse,
    PartnerApiCircuitOpen,
    PartnerApiError,
    PartnerApiRejected,
    PartnerApiServerError,
    PartnerApiUnavailable,
)


def failure_message(error: PartnerApiError) -> str:
    """Return a plain sentence about an upstream failure, safe to show on a page."""
    if isinstance(error, PartnerApiCircuitOpen):
        return (
            "The assessment service is unavailable at the moment, so the portal is not "
            "trying it for a little while. Please try again in a few minutes."
        )
    if isinstance(error, PartnerApiUnavailable):
        if error.status == 429:
            return "The assessment service is busy right now. Please try again in a minute."
        return (
            "The assessment service could not be reached or did not answer in time. "
            "Please try again in a few minutes."
        )
    if isinstance(error, PartnerApiRejected):
        reason = error.upstream_message or f"it answered with status {error.status}"
        return f"The assessment service refused the request: {reason}"
    if isinstance(error, PartnerApiServerError):
        return "The assessment service had an internal error. Please try again later."
    if isinstance(error, PartnerApiBadResponse):
        return (
            "The assessment service sent an answer the portal could not read. "
            "Please try again later; if it keeps happening, tell your administrator."
        )
    return "Something went wrong with the assessment service. Please try again later."


def record_failed_call(record) -> None:
    """Keep a failed upstream call for the operations page (a client call listener)."""
    if record.ok:
        return
    from portal.models import UpstreamFailure

    UpstreamFailure.objects.create(
        endpoint=record.endpoint,
        method=record.method,
        outcome=record.outcome[:200],
        status=record.status,
        attempt=record.attempt,
        request_id=(record.request_id or "")[:100],
        latency_ms=max(record.latency_ms, 0),
        at=record.at,
    )
