"""Retries and circuit breaking for the partner API client (no HTTP, no Django).

Owns the retry policy (bounded attempts, full-jitter backoff, Retry-After, a time budget per
call), the circuit breaker with its per-process registry (one breaker per upstream, shared by
every client of it), the circuit store through which the breakers of several processes share an
opening, and UpstreamStatus, the breaker's view that banners show. Which endpoint may be retried
at all is an assumption (assumptions.ENDPOINT_RETRIES); calls.Caller puts the two together.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Protocol

__all__ = [
    "BreakerSnapshot",
    "CircuitBreaker",
    "CircuitStore",
    "Permit",
    "RetryPlan",
    "RetryPolicy",
    "UpstreamStatus",
    "Verdict",
    "breaker_for",
    "check_breaker_settings",
    "circuit_store",
    "existing_breaker",
    "reset_circuit_breakers",
    "set_circuit_store",
    "status_of",
]

Clock = Callable[[], float]
Uniform = Callable[[float, float], float]

DEFAULT_MAX_ATTEMPTS = 4
DEFAULT_RETRY_BUDGET = 10.0  # seconds per call, attempts and sleeps included
DEFAULT_BACKOFF = 0.25  # ceiling of the first sleep, doubling for each later one
DEFAULT_BACKOFF_CAP = 2.0  # no sleep ceiling grows past this
DEFAULT_RETRY_AFTER_CAP = 5.0  # a longer Retry-After ends the call instead of waiting
DEFAULT_BREAKER_THRESHOLD = 5  # consecutive failed calls that open the circuit
DEFAULT_BREAKER_COOLDOWN = 30.0  # seconds of failing fast before a trial call

# How long a banner's view of another process's open circuit is reused (see snapshot).
SNAPSHOT_SHARED_SECONDS = 1.0
# No retry is started with less time than this left in the budget: it could not finish.
MIN_ATTEMPT_SECONDS = 0.1
# 2**60 backoff units already exceed any sane cap; larger exponents would overflow a float.
_MAX_EXPONENT = 60


logger = logging.getLogger("portal.partner_api")  # the name log readers know


# Retries --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RetryPlan:
    """What to do after a retryable failure: sleep `delay` seconds and retry, or give up."""

    delay: float | None  # None: give up
    reason: str  # for the log line


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries with exponential backoff, full jitter and a total time budget."""

    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    budget: float = DEFAULT_RETRY_BUDGET
    backoff: float = DEFAULT_BACKOFF
    backoff_cap: float = DEFAULT_BACKOFF_CAP
    retry_after_cap: float = DEFAULT_RETRY_AFTER_CAP

    def __post_init__(self) -> None:
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int):
            raise ValueError("The retry max attempts must be a whole number.")
        if self.max_attempts < 1:
            raise ValueError("The retry max attempts must be at least 1.")
        for name in ("budget", "backoff", "backoff_cap", "retry_after_cap"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"The retry {name.replace('_', ' ')} must be a number.")
            if not (0 <= value < math.inf):
                raise ValueError(f"The retry {name.replace('_', ' ')} must be 0 or more.")
        if self.budget <= 0:
            raise ValueError("The retry budget must be more than 0 seconds.")

    def backoff_ceiling(self, retry: int) -> float:
        """Return the longest sleep before the given retry (0 for the first one)."""
        return min(self.backoff_cap, self.backoff * 2 ** min(retry, _MAX_EXPONENT))

    def plan(
        self,
        *,
        attempt: int,
        max_attempts: int,
        retry_after: float | None,
        time_left: float,
        uniform: Uniform,
    ) -> RetryPlan:
        """Decide whether attempt number `attempt` (1-based) is followed by another, and when."""
        if attempt >= max_attempts:
            return RetryPlan(None, "giving up: attempts used up")
        if retry_after is not None:
            if retry_after > self.retry_after_cap:
                return RetryPlan(
                    None,
                    f"giving up: Retry-After {retry_after:g} s is over the "
                    f"{self.retry_after_cap:g} s cap",
                )
            delay = retry_after
            why = f"Retry-After {retry_after:g} s"
        else:
            ceiling = self.backoff_ceiling(attempt - 1)
            delay = min(max(uniform(0.0, ceiling), 0.0), ceiling)  # full jitter
            why = "backoff"
        if delay + MIN_ATTEMPT_SECONDS > time_left:
            return RetryPlan(None, f"giving up: a {delay:.2f} s wait would pass the time budget")
        return RetryPlan(delay, f"retrying in {delay:.2f} s ({why})")


# Circuit store --------------------------------------------------------------------------------

# A breaker keeps its state in its own process. With a store set (the portal sets one on its
# shared cache, partner_api.upstream.CacheCircuitStore, when CACHE_URL is Redis), a breaker that
# opens also writes until when, and every breaker of that upstream, in any process, fails fast
# until then too. Without one (the default, and the local-memory cache), each process decides
# alone. Times in the store are wall-clock seconds since the epoch: monotonic clocks of two
# processes do not agree.


class CircuitStore(Protocol):
    """Shared record of open circuits, by breaker key; reads that fail must return None."""

    def open_until(self, key: str) -> float | None:
        """Return until when (epoch seconds) the upstream's circuit is open, if it is."""

    def set_open(self, key: str, until: float) -> None:
        """Record that the circuit is open until `until` (epoch seconds)."""

    def set_closed(self, key: str) -> None:
        """Record that the circuit is closed: calls go through again."""


_store: CircuitStore | None = None
_store_lock = threading.Lock()


def set_circuit_store(store: CircuitStore | None) -> None:
    """Share open circuits through `store` from now on (None: each process alone)."""
    global _store
    with _store_lock:
        _store = store


def circuit_store() -> CircuitStore | None:
    """Return the store breakers share open circuits through, if any."""
    return _store


# Circuit breaker ------------------------------------------------------------------------------


class Verdict(Enum):
    """What a finished call says about the upstream's health."""

    HEALTHY = "healthy"  # it answered: a success, a refusal or an unusable body
    DOWN = "down"  # unreachable, timed out, overloaded or failing (5xx)
    UNKNOWN = "unknown"  # the call ended without telling (a bug, an odd exception)


class _State(Enum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half-open"


@dataclass(frozen=True)
class Permit:
    """Leave to make one call; `trial` marks the single probe of a half-open circuit."""

    trial: bool = False


@dataclass(frozen=True)
class BreakerSnapshot:
    """A consistent view of a breaker, for status banners."""

    state: str  # "closed", "open" or "half-open"
    available: bool  # False while calls fail fast
    open_for: float | None  # seconds of cool-down left, when open
    consecutive_failures: int


class CircuitBreaker:
    """Fail fast for a cool-down after `threshold` consecutive calls found the upstream down.

    Closed: calls go through; each DOWN call adds to the count, a HEALTHY one resets it, and
    reaching the threshold opens the circuit. Open: calls are refused until the cool-down ends.
    Half-open: one trial call goes through while the others are still refused; its HEALTHY end
    closes the circuit, its DOWN end opens it for another cool-down. A threshold of 0 turns the
    breaker off. Calls that were already under way when it opened only move the count.

    With a circuit store (set_circuit_store) and a key, an opening is shared: a
    closed breaker also fails fast while another process's circuit of the same key is open.
    """

    def __init__(
        self,
        threshold: int = DEFAULT_BREAKER_THRESHOLD,
        cooldown: float = DEFAULT_BREAKER_COOLDOWN,
        clock: Clock = time.monotonic,
        *,
        key: str | None = None,
    ) -> None:
        self.key = key  # names the upstream in the circuit store; None: never shared
        self._lock = threading.Lock()
        self._state = _State.CLOSED
        self._failures = 0
        self._open_until = 0.0
        self._trial_in_flight = False
        # When snapshot() last read the shared store (monotonic) and the opening it found.
        self._shared_seen: tuple[float, float | None] = (-math.inf, None)
        self.configure(threshold, cooldown, clock)

    def configure(self, threshold: int, cooldown: float, clock: Clock) -> None:
        """Apply (possibly changed) settings without losing the current state."""
        check_breaker_settings(threshold, cooldown)
        with self._lock:
            self.threshold = threshold
            self.cooldown = float(cooldown)
            self.clock = clock

    def allow(self) -> Permit | None:
        """Return a permit for one call, or None when the call must fail fast."""
        shared_open_for = self._shared_open_for()
        with self._lock:
            if self.threshold == 0:
                return Permit()
            if self._state is _State.CLOSED:
                return None if shared_open_for is not None else Permit()
            if self._state is _State.OPEN:
                if self.clock() < self._open_until:
                    return None
                self._state = _State.HALF_OPEN
            if self._trial_in_flight:
                return None
            self._trial_in_flight = True
            return Permit(trial=True)

    def settle(self, permit: Permit, verdict: Verdict) -> str | None:
        """Record how a permitted call ended; return "opened", "reopened" or "closed" if so."""
        change = self._settle(permit, verdict)
        if change is not None:
            self._share(change)
        return change

    def _settle(self, permit: Permit, verdict: Verdict) -> str | None:
        with self._lock:
            if verdict is Verdict.HEALTHY:
                self._failures = 0
            elif verdict is Verdict.DOWN:
                self._failures += 1
            if permit.trial:
                self._trial_in_flight = False
                if verdict is Verdict.HEALTHY:
                    self._state = _State.CLOSED
                    return "closed"
                if verdict is Verdict.DOWN:
                    self._open()
                    return "reopened"
                return None  # still half-open: the next call is the trial
            if (
                self._state is _State.CLOSED
                and self.threshold
                and verdict is Verdict.DOWN
                and self._failures >= self.threshold
            ):
                self._open()
                return "opened"
            return None

    def snapshot(self) -> BreakerSnapshot:
        """Describe the breaker now, without changing it."""
        # Banners ask on every page: the shared store is read at most every
        # SNAPSHOT_SHARED_SECONDS for them (a call's allow() always reads it).
        now = time.monotonic()
        seen_at, seen_until = self._shared_seen
        if now - seen_at >= SNAPSHOT_SHARED_SECONDS:
            left = self._shared_open_for()
            seen_until = None if left is None else time.time() + left
            self._shared_seen = (now, seen_until)
        shared_open_for = None if seen_until is None else seen_until - time.time()
        if shared_open_for is not None and shared_open_for <= 0:
            shared_open_for = None
        with self._lock:
            if self._state is _State.CLOSED and self.threshold and shared_open_for is not None:
                return BreakerSnapshot("open", False, shared_open_for, self._failures)
            if self.threshold == 0 or self._state is _State.CLOSED:
                return BreakerSnapshot("closed", True, None, self._failures)
            now = self.clock()
            if self._state is _State.OPEN and now < self._open_until:
                return BreakerSnapshot("open", False, self._open_until - now, self._failures)
            # Cool-down over: the next call goes through as the trial, unless one is out.
            return BreakerSnapshot("half-open", not self._trial_in_flight, None, self._failures)

    def _open(self) -> None:
        """Open the circuit for one cool-down (the lock is held)."""
        self._state = _State.OPEN
        self._open_until = self.clock() + self.cooldown

    def _shared_open_for(self) -> float | None:
        """Return the seconds another process's open circuit of this key has left, if any."""
        store = circuit_store()
        if store is None or self.key is None or not self.threshold:
            return None
        try:
            until = store.open_until(self.key)
        except Exception:  # the store is a help, never a reason for a call to fail
            logger.warning("circuit store unreadable; this process decides alone", exc_info=True)
            return None
        left = None if until is None else until - time.time()
        return left if left is not None and left > 0 else None

    def _share(self, change: str) -> None:
        """Tell the circuit store this process's circuit opened or closed (outside the lock)."""
        self._shared_seen = (-math.inf, None)  # the next snapshot reads the store afresh
        store = circuit_store()
        if store is None or self.key is None:
            return
        try:
            if change == "closed":
                store.set_closed(self.key)
            else:
                store.set_open(self.key, time.time() + self.cooldown)
        except Exception:
            logger.warning("circuit store unwritable; other processes decide alone", exc_info=True)


def check_breaker_settings(threshold: int, cooldown: float) -> None:
    """Raise ValueError unless the threshold and cool-down are usable."""
    if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 0:
        raise ValueError("The circuit breaker threshold must be a whole number, 0 or more.")
    if isinstance(cooldown, bool) or not isinstance(cooldown, int | float):
        raise ValueError("The circuit breaker cool-down must be a number of seconds.")
    if not (0 < cooldown < math.inf):
        raise ValueError("The circuit breaker cool-down must be more than 0 seconds.")


# One breaker per upstream and process, shared by every client built for that upstream (a
# client rebuilt after a settings change keeps the circuit's state).
_breakers: dict[str, CircuitBreaker] = {}
_breakers_lock = threading.Lock()


def breaker_for(key: str, *, threshold: int, cooldown: float, clock: Clock) -> CircuitBreaker:
    """Return the breaker of an upstream, created or reconfigured with these settings."""
    with _breakers_lock:
        breaker = _breakers.get(key)
        if breaker is None:
            breaker = _breakers[key] = CircuitBreaker(threshold, cooldown, clock, key=key)
            return breaker
    if (breaker.threshold, breaker.cooldown, breaker.clock) != (threshold, cooldown, clock):
        breaker.configure(threshold, cooldown, clock)
    return breaker


def existing_breaker(key: str) -> CircuitBreaker | None:
    """Return the breaker of an upstream if a call has made one, without creating it."""
    with _breakers_lock:
        return _breakers.get(key)


def reset_circuit_breakers() -> None:
    """Forget every breaker (for tests): all circuits start closed with no failures."""
    with _breakers_lock:
        _breakers.clear()


# Upstream status ------------------------------------------------------------------------------


@dataclass(frozen=True)
class UpstreamStatus:
    """Whether calls to the upstream go through or fail fast (the circuit breaker's view)."""

    available: bool
    open_until: datetime | None  # when the cool-down of an open circuit ends
    consecutive_failures: int


def status_of(breaker: CircuitBreaker | None) -> UpstreamStatus:
    """Describe an upstream by its breaker; None (no call yet) means nothing is held against it."""
    if breaker is None:
        return UpstreamStatus(available=True, open_until=None, consecutive_failures=0)
    snapshot = breaker.snapshot()
    open_until = None
    if snapshot.open_for is not None:
        open_until = datetime.now(UTC) + timedelta(seconds=snapshot.open_for)
    return UpstreamStatus(snapshot.available, open_until, snapshot.consecutive_failures)
