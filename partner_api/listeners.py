"""Observing the partner API client's calls: a record of every attempt, and who is told of it.

Owns CallRecord and the two registries of this process: call listeners (told after every attempt
of every client, and of each call the open circuit refused) and circuit listeners (told when a
circuit opens, re-opens or closes). The portal records failures and publishes circuit changes
through them (portal.apps); a listener that fails is logged and skipped.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from partner_api.errors import PartnerApiError

__all__ = [
    "CallRecord",
    "add_call_listener",
    "add_circuit_listener",
    "notify_call_listeners",
    "notify_circuit_listeners",
    "remove_call_listener",
    "remove_circuit_listener",
]

logger = logging.getLogger("portal.partner_api")  # the name log readers know


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
