"""Where the breakers of several processes share an upstream's open circuit (no Django here).

A breaker keeps its state in its own process. With a store set (the portal sets one on its
shared cache, partner_api.upstream.CacheCircuitStore, when CACHE_URL is Redis), a breaker that
opens also writes until when, and every breaker of that upstream, in any process, fails fast
until then too. Without one (the default, and the local-memory cache), each process decides
alone, as before. Times in the store are wall-clock seconds since the epoch: monotonic clocks
of two processes do not agree.
"""

from __future__ import annotations

import threading
from typing import Protocol

__all__ = ["CircuitStore", "circuit_store", "set_circuit_store"]


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
