"""What to tell a person when the assessment service fails: one wording for every page."""

from portal.partner_api import (
    PartnerApiBadResponse,
    PartnerApiError,
    PartnerApiRejected,
    PartnerApiServerError,
    PartnerApiUnavailable,
)


def failure_message(error: PartnerApiError) -> str:
    """Return a plain sentence about an upstream failure, safe to show on a page."""
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
