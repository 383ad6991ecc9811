"""The errors of the partner API client: PartnerApiError and the kinds of failure under it.

Owns the error hierarchy of the client contract. Every error names the endpoint, and carries the
HTTP status and the upstream's request id when there were any; str() of an error is a sentence
safe for logs and staff (it never holds the API key, a learner id or a password).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

__all__ = [
    "PartnerApiBadResponse",
    "PartnerApiCircuitOpen",
    "PartnerApiError",
    "PartnerApiRejected",
    "PartnerApiServerError",
    "PartnerApiUnavailable",
]


class PartnerApiError(Exception):
    """Any failure of a call to the partner API; str() is a sentence safe for logs and staff."""

    default_reason = "request failed"

    def __init__(
        self,
        endpoint: str,
        reason: str | None = None,
        *,
        status: int | None = None,
        request_id: str | None = None,
        upstream_message: str | None = None,
        detail: str | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.reason = reason or self.default_reason
        self.status = status
        self.request_id = request_id
        self.upstream_message = upstream_message
        self.detail = detail if detail is not None else upstream_message
        super().__init__(self._sentence())

    def _sentence(self) -> str:
        """Build the readable message from the parts."""
        sentence = f"{self.endpoint}: {self.reason}"
        if self.status is not None:
            sentence += f" ({self.status})"
        if self.detail:
            sentence += f": {self.detail}"
        return sentence

    def __str__(self) -> str:
        return self._sentence()


class PartnerApiUnavailable(PartnerApiError):
    """The upstream could not be reached, timed out, is overloaded or asked us to slow down."""

    default_reason = "upstream unavailable"

    def __init__(
        self,
        endpoint: str,
        reason: str | None = None,
        *,
        retry_after: float | None = None,
        reached_upstream: bool = True,
        **kwargs: Any,
    ) -> None:
        self.retry_after = retry_after
        # False only when the request surely never left this host (connect failed or timed
        # out): then even a POST can be retried without risk of doing it twice.
        self.reached_upstream = reached_upstream
        super().__init__(endpoint, reason, **kwargs)


class PartnerApiRejected(PartnerApiError):
    """The upstream refused the request (a 4xx other than 429)."""

    default_reason = "upstream refused the request"


class PartnerApiBadResponse(PartnerApiError):
    """The upstream answered with something we cannot use (not JSON, wrong shape, redirect)."""

    default_reason = "unexpected response from upstream"


class PartnerApiServerError(PartnerApiError):
    """The upstream failed with a 5xx other than 502/503/504."""

    default_reason = "upstream server error"


class PartnerApiCircuitOpen(PartnerApiUnavailable):
    """The upstream failed repeatedly, so calls fail fast for a cool-down without being sent."""

    default_reason = "assessment service marked unavailable (circuit open)"

    def __init__(
        self,
        endpoint: str,
        reason: str | None = None,
        *,
        open_until: datetime | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.open_until = open_until  # None while a trial call is deciding
        super().__init__(endpoint, reason, retry_after=retry_after, reached_upstream=False)
