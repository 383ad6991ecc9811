"""The portal's view of the assessment service: what to tell people when it fails, the record
of failed calls, and whether it is available, as far as any process knows."""

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from portal.partner_api import (
    PartnerApiBadResponse,
    PartnerApiCircuitOpen,
    PartnerApiError,
    PartnerApiRejected,
    PartnerApiServerError,
    PartnerApiUnavailable,
    get_client,
    upstream_status,
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
    from portal.models import UpstreamFailure

    # A call refused by the open circuit never reached the service: not a new failure.
    if not record.ok and record.outcome != CIRCUIT_OPEN_OUTCOME:
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


CIRCUIT_OPEN_OUTCOME = "circuit open"


def publish_circuit_change(base_url: str, change: str) -> None:
    """Tell every process when this one's circuit opens or closes (a circuit listener)."""
    from portal.models import UpstreamHealth

    until = None
    if change != "closed":
        until = upstream_status(base_url).open_until or timezone.now()
    UpstreamHealth.objects.update_or_create(
        base_url=base_url, defaults={"unavailable_until": until}
    )
    cache.delete(f"portal.upstream-health:{base_url}")


def upstream_available() -> bool:
    """Say whether the assessment service is answering, as far as any process knows."""
    from portal.models import UpstreamHealth

    try:
        base_url = get_client().base_url
    except ImproperlyConfigured:
        return False
    if not upstream_status(base_url).available:
        return False
    # Every page asks, so what other processes published is read at most every
    # UPSTREAM_HEALTH_CACHE_SECONDS (this process's own changes are known at once, above).
    key = f"portal.upstream-health:{base_url}"
    until = cache.get(key, _NOT_CACHED)
    if until is _NOT_CACHED:
        until = (
            UpstreamHealth.objects.filter(base_url=base_url)
            .values_list("unavailable_until", flat=True)
            .first()
        )
        if settings.UPSTREAM_HEALTH_CACHE_SECONDS > 0:
            cache.set(key, until, settings.UPSTREAM_HEALTH_CACHE_SECONDS)
    return until is None or until <= timezone.now()


_NOT_CACHED = object()
