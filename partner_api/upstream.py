"""The portal's view of the assessment service: what to tell people when it fails, the record
of failed calls, and whether it is available, as far as any process knows."""

import logging
import math
import time
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone, translation
from django.utils.functional import lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from partner_api.client import get_client, upstream_status
from partner_api.contract import (
    PartnerApiBadResponse,
    PartnerApiCircuitOpen,
    PartnerApiError,
    PartnerApiRejected,
    PartnerApiServerError,
    PartnerApiUnavailable,
)

# Every failure is one of these kinds; what people are told is looked up by kind below.
PAUSED, BUSY, UNREACHABLE, REFUSED, INTERNAL, UNREADABLE, OTHER = (
    "paused", "busy", "unreachable", "refused", "internal", "unreadable", "other"
)  # fmt: skip

# What went wrong, in whole sentences. Kept with an attempt as its last problem, whose page
# says what happens next (it is sent automatically, or the learner fetches it again).
FAILURE_REASONS = {
    PAUSED: gettext_lazy(
        "The assessment service is unavailable at the moment, so the portal is not trying it "
        "for a little while."
    ),
    BUSY: gettext_lazy("The assessment service is busy right now."),
    UNREACHABLE: gettext_lazy(
        "The assessment service could not be reached or did not answer in time."
    ),
    INTERNAL: gettext_lazy("The assessment service had an internal error."),
    UNREADABLE: gettext_lazy("The assessment service sent an answer the portal could not read."),
    OTHER: gettext_lazy("Something went wrong with the assessment service."),
}
# What to do about it, added where the person can act at once.
FAILURE_ADVICE = {
    PAUSED: gettext_lazy("Please try again in a few minutes."),
    BUSY: gettext_lazy("Please try again in a minute."),
    UNREACHABLE: gettext_lazy("Please try again in a few minutes."),
    INTERNAL: gettext_lazy("Please try again later."),
    UNREADABLE: gettext_lazy(
        "Please try again later; if it keeps happening, tell your administrator."
    ),
    OTHER: gettext_lazy("Please try again later."),
}
# Only what went wrong, in lower case, for the middle of a sentence: the kinds after which the
# service may have acted anyway (upstream_may_have_acted).
# Translators: each completes "Outcome unknown: …".
FAILURE_CAUSES = {
    BUSY: gettext_lazy("the assessment service was busy"),
    UNREACHABLE: gettext_lazy(
        "the assessment service could not be reached or did not answer in time"
    ),
    INTERNAL: gettext_lazy("the assessment service had an internal error"),
    UNREADABLE: gettext_lazy("the assessment service sent an answer the portal could not read"),
    OTHER: gettext_lazy("something went wrong with the assessment service"),
}


def failure_kind(error: PartnerApiError) -> str:
    """Say which kind of failure an upstream error is."""
    if isinstance(error, PartnerApiCircuitOpen):
        return PAUSED
    if isinstance(error, PartnerApiUnavailable):
        return BUSY if error.status == 429 else UNREACHABLE
    if isinstance(error, PartnerApiRejected):
        return REFUSED
    if isinstance(error, PartnerApiServerError):
        return INTERNAL
    if isinstance(error, PartnerApiBadResponse):
        return UNREADABLE
    return OTHER


def upstream_may_have_acted(error: PartnerApiError) -> bool:
    """Whether the service may have carried out a request whose reply never came as agreed."""
    return isinstance(error, PartnerApiServerError | PartnerApiBadResponse) or (
        isinstance(error, PartnerApiUnavailable) and error.reached_upstream
    )


def failure_message(error: PartnerApiError) -> str:
    """Say what went wrong and what to do, in whole sentences safe to show on a page."""
    kind = failure_kind(error)
    if kind == REFUSED:
        return _refusal(error)
    advice = FAILURE_ADVICE[kind]
    if kind == PAUSED:
        advice = try_again_in(error.open_until) or advice
    # Translators: what went wrong, then what to do about it (each whole sentences).
    return _("%(what_went_wrong)s %(what_to_do)s") % {
        "what_went_wrong": FAILURE_REASONS[kind],
        "what_to_do": advice,
    }


def try_again_in(until: datetime | None) -> str:
    """Say when to try again, rounded up ("Try again in about 30 seconds."); "" if unknown."""
    seconds = (until - timezone.now()).total_seconds() if until is not None else 0
    if seconds <= 0:
        return ""
    if seconds <= 50:
        count = max(10, math.ceil(seconds / 10) * 10)
        # Translators: how long until the assessment service is tried again, in seconds.
        wait = ngettext("%(count)d second", "%(count)d seconds", count) % {"count": count}
    else:
        count = math.ceil(seconds / 60)
        # Translators: how long until the assessment service is tried again, in minutes.
        wait = ngettext("%(count)d minute", "%(count)d minutes", count) % {"count": count}
    # Translators: %(wait)s is a short wait such as "30 seconds" or "2 minutes".
    return _("Try again in about %(wait)s.") % {"wait": wait}


# The tag of a message saying the service failed (not that it refused): while the banner says
# the service is unavailable, such a message would say the same again, so pages leave it out.
FAILURE_MESSAGE_TAG = "upstream-failure"


def failure_message_tags(error: PartnerApiError) -> str:
    """Return the extra tags of a message about this error (for django.contrib.messages)."""
    return "" if failure_kind(error) == REFUSED else FAILURE_MESSAGE_TAG


def failure_reason(error: PartnerApiError) -> str:
    """Say what went wrong, without advice (for a problem kept with an attempt)."""
    kind = failure_kind(error)
    return _refusal(error) if kind == REFUSED else str(FAILURE_REASONS[kind])


def failure_cause(error: PartnerApiError) -> str:
    """Say only what went wrong, in lower case, for the middle of a sentence."""
    return str(FAILURE_CAUSES.get(failure_kind(error), FAILURE_CAUSES[OTHER]))


def _refusal(error: PartnerApiError) -> str:
    """The refusal as a sentence, with the service's own words where it gave any."""
    if error.upstream_message:
        # Translators: %(reason)s is the assessment service's own message, in its language.
        return _("The assessment service refused the request: %(reason)s.") % {
            "reason": error.upstream_message.rstrip(" .")
        }
    # Translators: %(status)s is an HTTP status code such as 404.
    return _("The assessment service refused the request: it answered with status %(status)s.") % {
        "status": error.status
    }


# How the operations page names a failed call's recorded outcome. The client records a status
# code, or one of these reasons (partner_api.transport._transport_error), in English
# for the logs.
CALL_OUTCOMES = {
    "timed out connecting": gettext_lazy("timed out connecting"),
    "timed out waiting for a response": gettext_lazy("timed out waiting for a response"),
    "timed out": gettext_lazy("timed out"),
    "TLS handshake failed": gettext_lazy("TLS handshake failed"),
    "could not connect through the proxy": gettext_lazy("could not connect through the proxy"),
    "connection dropped while reading the response": gettext_lazy(
        "connection dropped while reading the response"
    ),
    "could not connect": gettext_lazy("could not connect"),
    "connection dropped": gettext_lazy("connection dropped"),
    "connection failed": gettext_lazy("connection failed"),
    "upstream is rate limiting us": gettext_lazy("the service is limiting our requests"),
    "no status": gettext_lazy("no status"),
}


def call_outcome_label(outcome: str) -> str:
    """Return a recorded call outcome in the reader's language (a status code stays as it is)."""
    return str(CALL_OUTCOMES.get(outcome, outcome))


# A message kept in the database (an attempt's last problem) is kept in the source language and
# translated when it is shown: the worker that writes it has no reader, and each reader may read
# another language. (A message with the service's own words in it cannot be looked up, and
# shows as written.)
SOURCE_LANGUAGE = "en"

failure_reason_lazy = lazy(failure_reason, str)


def text_to_store(message: object) -> str:
    """Return a (lazy) message in the source language, to be translated when shown."""
    with translation.override(SOURCE_LANGUAGE):
        return str(message)


def record_failed_call(record) -> None:
    """Keep a failed upstream call for the operations page (a client call listener)."""
    from partner_api.models import UpstreamFailure

    # A call refused by the open circuit never reached the service: not a new failure. Nor is
    # the expected "no results yet" while the portal waits for them.
    if not record.ok and not record.expected and record.outcome != CIRCUIT_OPEN_OUTCOME:
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
    from partner_api.models import UpstreamHealth

    until = None
    if change != "closed":
        until = upstream_status(base_url).open_until or timezone.now()
    UpstreamHealth.objects.update_or_create(
        base_url=base_url, defaults={"unavailable_until": until}
    )
    cache.delete(f"portal.upstream-health:{base_url}")
    _health_read.pop(base_url, None)


@dataclass(frozen=True)
class Outage:
    """The assessment service is not being called, as far as any process knows."""

    until: datetime | None  # when calls go through again, if known

    def try_again(self) -> str:
        """Say when to try again ("Try again in about 30 seconds."), or "" if unknown."""
        return try_again_in(self.until)


def upstream_available() -> bool:
    """Say whether the assessment service is answering, as far as any process knows."""
    return upstream_outage() is None


def upstream_outage() -> Outage | None:
    """Return the service's outage as far as any process knows, or None while it answers."""
    from partner_api.models import UpstreamHealth

    try:
        base_url = get_client().base_url
    except ImproperlyConfigured:
        return Outage(until=None)
    status = upstream_status(base_url)
    if not status.available:
        return Outage(until=status.open_until)
    # Every page asks, so what other processes published is read at most every
    # UPSTREAM_HEALTH_CACHE_SECONDS (this process's own changes are known at once, above);
    # from a shared cache, a round trip away, it is kept that long in memory too.
    seconds = settings.UPSTREAM_HEALTH_CACHE_SECONDS
    now = time.monotonic()
    read_at, until = _health_read.get(base_url, (None, None))
    if read_at is None or not settings.CACHE_IS_SHARED or seconds <= 0 or now - read_at >= seconds:
        key = f"portal.upstream-health:{base_url}"
        until = cache.get(key, _NOT_CACHED)
        if until is _NOT_CACHED:
            until = (
                UpstreamHealth.objects.filter(base_url=base_url)
                .values_list("unavailable_until", flat=True)
                .first()
            )
            if seconds > 0:
                cache.set(key, until, seconds)
        _health_read[base_url] = (now, until)
    return None if until is None or until <= timezone.now() else Outage(until=until)


# What this process last read of each upstream's published health, and when (monotonic).
_health_read: dict[str, tuple[float, object]] = {}


_NOT_CACHED = object()

logger = logging.getLogger(__name__)


class CacheCircuitStore:
    """Open circuits shared through Django's cache (Redis), for every process's breakers.

    A key expires with its cool-down, so a process that died holding the circuit open does
    not keep the others failing fast. A cache that cannot be read counts as no opening.
    """

    def open_until(self, key: str) -> float | None:
        try:
            return cache.get(_circuit_key(key))
        except Exception:
            logger.warning("Shared circuit state unreadable; deciding in this process alone")
            return None

    def set_open(self, key: str, until: float) -> None:
        cache.set(_circuit_key(key), until, timeout=max(1, math.ceil(until - time.time())))

    def set_closed(self, key: str) -> None:
        cache.delete(_circuit_key(key))


def _circuit_key(key: str) -> str:
    return f"portal.circuit-open:{key}"
