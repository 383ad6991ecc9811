"""What happens to every call of the partner API client, whichever the endpoint, and who is told.

Owns the life of one call: the circuit breaker's permit (or failing fast while it is open), the
attempts with retries as the endpoint's rule and the retry policy allow, each attempt's timeout
cut to what is left of the budget, one log line per attempt, and telling the breaker how the
call ended. The request itself is built by the client and sent by the transport. Also owns
CallRecord and the two registries of listeners of this process: call listeners (told after
every attempt of every client, and of each call the open circuit refused) and circuit listeners
(told when a circuit opens, re-opens or closes). The portal records failures and publishes
circuit changes through them (partner_api.apps); a listener that fails is logged and skipped.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from django.views.decorators.debug import sensitive_variables

from partner_api.assumptions import (
    ENDPOINT_RETRIES,
    EXPECTED_REFUSALS,
    NOT_RETRIED,
    RETRY_IF_NOT_SENT,
    RETRY_IF_UNAVAILABLE,
    RETRY_NEVER,
)
from partner_api.contract import (
    PartnerApiBadResponse,
    PartnerApiCircuitOpen,
    PartnerApiError,
    PartnerApiRejected,
    PartnerApiServerError,
    PartnerApiUnavailable,
)
from partner_api.resilience import (
    MIN_ATTEMPT_SECONDS,
    CircuitBreaker,
    Permit,
    RetryPlan,
    RetryPolicy,
    Verdict,
)
from partner_api.transport import Reader, Transport, _Request

logger = logging.getLogger("portal.partner_api")  # the name log readers know

_T = TypeVar("_T")


@dataclass(frozen=True)
class Caller:
    """One client's way of making calls: its transport, timeouts, retry policy and breaker.

    `sleep`, `uniform` (random.uniform(a, b)) and `clock` (monotonic seconds) are the client's,
    so that tests can make time pass without waiting.
    """

    transport: Transport
    base_url: str  # the upstream, as circuit listeners are told it
    timeout: tuple[float, float]
    policy: RetryPolicy
    breaker: CircuitBreaker
    sleep: Callable[[float], object]
    uniform: Callable[[float, float], float]
    clock: Callable[[], float]

    @sensitive_variables()
    def call(self, request: _Request, read: Reader[_T]) -> _T:
        """Make one call: fail fast while the circuit is open, else attempt it as allowed."""
        permit = self.breaker.allow()
        if permit is None:
            raise self._refuse(request)
        try:
            result = self._attempt_until_done(request, read)
        except BaseException as exc:
            self._settle(permit, _verdict(exc), request)
            raise
        self._settle(permit, Verdict.HEALTHY, request)
        return result

    @sensitive_variables()
    def _attempt_until_done(self, request: _Request, read: Reader[_T]) -> _T:
        """Attempt a request, retrying as its endpoint allows, and return what `read` makes."""
        policy = self.policy
        rule = ENDPOINT_RETRIES[request.endpoint]
        max_attempts = 1 if rule == RETRY_NEVER else policy.max_attempts
        deadline = self.clock() + policy.budget
        attempt = 0
        while True:
            attempt += 1
            timeout = self._attempt_timeout(request, attempt, deadline)
            at = datetime.now(UTC)
            started = self.clock()
            error: PartnerApiError | None = None
            try:
                result, status, request_id = self.transport.exchange(request, timeout, read)
            except PartnerApiError as exc:
                error = exc
                status, request_id = exc.status, exc.request_id
            latency_ms = max(round((self.clock() - started) * 1000), 0)

            plan: RetryPlan | None = None
            if isinstance(error, PartnerApiUnavailable):
                if rule == RETRY_IF_UNAVAILABLE or (
                    rule == RETRY_IF_NOT_SENT and not error.reached_upstream
                ):
                    plan = policy.plan(
                        attempt=attempt,
                        max_attempts=max_attempts,
                        retry_after=error.retry_after,
                        time_left=deadline - self.clock(),
                        uniform=self.uniform,
                    )
                else:
                    plan = RetryPlan(None, NOT_RETRIED[rule])

            record = CallRecord(
                endpoint=request.endpoint,
                method=request.method,
                outcome=str(status) if status is not None else _failure_kind(error),
                status=status,
                ok=error is None,
                latency_ms=latency_ms,
                attempt=attempt,
                request_id=request_id,
                error=error,
                at=at,
                expected=_expected_refusal(request.endpoint, error),
            )
            _log_attempt(record, max_attempts, plan)
            notify_call_listeners(record)
            if error is None:
                return result
            if plan is None or plan.delay is None:
                raise error
            self.sleep(plan.delay)

    def _attempt_timeout(
        self, request: _Request, attempt: int, deadline: float
    ) -> tuple[float, float]:
        """Return the (connect, read) timeout of an attempt, cut to what is left of the budget."""
        if attempt == 1:
            if request.method != "GET":
                return self.timeout  # a POST sent once gets all its time, never cut short
            time_left = self.policy.budget
        else:
            time_left = max(deadline - self.clock(), MIN_ATTEMPT_SECONDS)
        connect, read = self.timeout
        return (min(connect, time_left), min(read, time_left))

    def _refuse(self, request: _Request) -> PartnerApiCircuitOpen:
        """Build, log and report the error of a call refused by the open circuit."""
        snapshot = self.breaker.snapshot()
        open_until = None
        if snapshot.open_for is not None:
            open_until = datetime.now(UTC) + timedelta(seconds=snapshot.open_for)
        error = PartnerApiCircuitOpen(
            request.endpoint, open_until=open_until, retry_after=snapshot.open_for
        )
        logger.info(
            "partner API %s %s -> circuit open, not sent (%s)",
            request.endpoint,
            request.method,
            f"{snapshot.open_for:.0f} s of cool-down left"
            if snapshot.open_for is not None
            else "a trial call is under way",
        )
        notify_call_listeners(
            CallRecord(
                endpoint=request.endpoint,
                method=request.method,
                outcome="circuit open",
                status=None,
                ok=False,
                latency_ms=0,
                attempt=0,
                request_id=None,
                error=error,
                at=datetime.now(UTC),
            )
        )
        return error

    def _settle(self, permit: Permit, verdict: Verdict, request: _Request) -> None:
        """Tell the breaker how a call ended, and log when that opens or closes the circuit."""
        breaker = self.breaker
        change = breaker.settle(permit, verdict)
        if change is not None:
            notify_circuit_listeners(self.base_url, change)
        if change == "closed":
            logger.info("partner API circuit closed: a trial %s call succeeded", request.endpoint)
        elif change is not None:
            logger.warning(
                "partner API circuit %s after %d consecutive failed calls (last: %s); "
                "failing fast for %g s",
                change,
                breaker.snapshot().consecutive_failures,
                request.endpoint,
                breaker.cooldown,
            )


def _log_attempt(record: CallRecord, max_attempts: int, plan: RetryPlan | None) -> None:
    """Log one line per attempt: never headers, bodies, query values or identifiers of people."""
    details = ""
    if isinstance(record.error, PartnerApiBadResponse) and record.error.detail:
        details += f"; {record.error.detail}"  # a field path or "body is not JSON": no values
    if plan is not None:
        details += f"; {plan.reason}"
    logger.log(
        logging.INFO if record.ok or record.expected else logging.WARNING,
        "partner API %s %s -> %s in %d ms (attempt %d/%d, request id %s)%s",
        record.endpoint,
        record.method,
        record.outcome,
        record.latency_ms,
        record.attempt,
        max_attempts,
        record.request_id or "-",
        details,
    )


def _failure_kind(error: PartnerApiError | None) -> str:
    """Name a failure that came without a status (a transport failure) for logs and records."""
    return error.reason if error is not None else "no status"


def _expected_refusal(endpoint: str, error: PartnerApiError | None) -> bool:
    """Whether a refusal is the answer the portal asks for (results not there yet)."""
    return isinstance(error, PartnerApiRejected) and error.status in EXPECTED_REFUSALS.get(
        endpoint, ()
    )


def _verdict(exc: BaseException) -> Verdict:
    """Say what the way a call ended tells about the upstream's health, for the breaker."""
    if isinstance(exc, PartnerApiUnavailable | PartnerApiServerError):
        return Verdict.DOWN
    if isinstance(exc, PartnerApiRejected | PartnerApiBadResponse):
        return Verdict.HEALTHY  # it answered, if not as hoped
    return Verdict.UNKNOWN


# Listeners ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallRecord:
    """One attempt at a call (or one call refused by the open circuit), for call listeners."""

    endpoint: str
    method: str
    outcome: str  # the status ("200", "503") or the failure ("timed out connecting", ...)
    status: int | None
    ok: bool
    latency_ms: int
    attempt: int  # 1-based; 0 when the open circuit refused the call before any attempt
    request_id: str | None
    error: PartnerApiError | None
    at: datetime  # when the attempt started
    # A refusal the portal asks for on purpose (results not there yet): an answer, not a
    # failure, so it is neither kept on the operations page nor counted as one.
    expected: bool = False


CallListener = Callable[[CallRecord], object]
_call_listeners: list[CallListener] = []
_listeners_lock = threading.Lock()


def add_call_listener(listener: CallListener) -> None:
    """Call `listener(record)` after every attempt of every client in this process."""
    with _listeners_lock:
        if listener not in _call_listeners:
            _call_listeners.append(listener)


def remove_call_listener(listener: CallListener) -> None:
    """Stop calling a listener (nothing happens if it was not added)."""
    with _listeners_lock:
        if listener in _call_listeners:
            _call_listeners.remove(listener)


def notify_call_listeners(record: CallRecord) -> None:
    """Give the record to every listener; a listener that fails is logged and skipped."""
    with _listeners_lock:
        listeners = tuple(_call_listeners)
    for listener in listeners:
        try:
            listener(record)
        except Exception:
            logger.exception(
                "partner API call listener %s failed; ignored",
                getattr(listener, "__qualname__", type(listener).__name__),
            )


CircuitListener = Callable[[str, str], object]
_circuit_listeners: list[CircuitListener] = []


def add_circuit_listener(listener: CircuitListener) -> None:
    """Call `listener(base_url, change)` when a circuit opens, re-opens or closes."""
    with _listeners_lock:
        if listener not in _circuit_listeners:
            _circuit_listeners.append(listener)


def remove_circuit_listener(listener: CircuitListener) -> None:
    """Stop calling a circuit listener (nothing happens if it was not added)."""
    with _listeners_lock:
        if listener in _circuit_listeners:
            _circuit_listeners.remove(listener)


def notify_circuit_listeners(base_url: str, change: str) -> None:
    """Tell every circuit listener; a listener that fails is logged and skipped."""
    with _listeners_lock:
        listeners = tuple(_circuit_listeners)
    for listener in listeners:
        try:
            listener(base_url, change)
        except Exception:
            logger.exception("partner API circuit listener failed; ignored")
