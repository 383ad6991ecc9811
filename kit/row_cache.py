"""Rows read on many requests (the user, the school's settings), kept in the shared cache.

A row is read through cached_row under a key and dropped with forget_row when it changes;
with ROW_CACHE_SECONDS at 0 every read goes to the database. The signed-in user's row is
read beside the session in one cache round trip (accounts.sessions hands it over here).
"""

import time
from contextvars import ContextVar

from django.conf import settings
from django.core.cache import cache
from django.core.signals import request_finished
from django.db import transaction

MEMORY_LIMIT = 10_000


# A row read from the cache together with this request's session (accounts.sessions): the
# key and what the cache held (None: nothing), used once by cached_row.
_prefetched: ContextVar[tuple[str, object] | None] = ContextVar("prefetched_row", default=None)


def prefetch_row(key: str | None, row) -> None:
    """Hand cached_row what the cache held under `key`, read beside the session."""
    _prefetched.set(None if key is None else (key, row))


def cached_row(key: str, load):
    """Return what `load()` returns, from the shared cache while it is not dropped (forget_row).

    None is never kept: a missing account signs nobody in, and a new one must show at once.
    """
    seconds = settings.ROW_CACHE_SECONDS
    if seconds <= 0:
        return load()
    prefetched = _prefetched.get()
    if prefetched is not None and prefetched[0] == key:
        _prefetched.set(None)
        row = prefetched[1]
    else:
        row = cache.get(key)
    if row is None:
        row = load()
        if row is not None:
            cache.set(key, row, seconds)
    return row


# Rows read through cached_rows, also kept in this process for ROW_MEMORY_SECONDS: key ->
# (when it goes, the row). Never the user (its checks must see another process's change at
# once): only rows a page may show a moment late, such as the partner's settings.
_memory: dict[str, tuple[float, object]] = {}


def cached_rows(loaders: dict[str, object]) -> dict[str, object]:
    """Return cached_row for each key of `loaders` (key -> load), in one cache round trip.

    What was read is kept in this process's memory for ROW_MEMORY_SECONDS too, so a change
    made by another process shows here within that time (one made here, at once).
    """
    seconds = settings.ROW_CACHE_SECONDS
    if seconds <= 0:
        return {key: load() for key, load in loaders.items()}
    now = time.monotonic()
    rows = {}
    for key in loaders:
        kept = _memory.get(key)
        if kept is not None and kept[0] > now:
            rows[key] = kept[1]
    missing = [key for key in loaders if key not in rows]
    found = cache.get_many(missing) if missing else {}
    for key in missing:
        row = found.get(key)
        if row is None:
            row = loaders[key]()
            if row is not None:
                cache.set(key, row, seconds)
        rows[key] = row
        if settings.ROW_MEMORY_SECONDS > 0:
            if len(_memory) >= MEMORY_LIMIT:
                _memory.clear()  # a few rows per school: the limit is never reached in use
            _memory[key] = (now + settings.ROW_MEMORY_SECONDS, row)
    return rows


def _forget_prefetched(**kwargs) -> None:
    _prefetched.set(None)  # never carried into the thread's next request


def forget_row(key: str) -> None:
    """Drop a cached row now and once the transaction commits.

    Dropped again after the commit: a request that read the old row before the commit may
    have cached it meanwhile.
    """
    _memory.pop(key, None)
    cache.delete(key)
    transaction.on_commit(lambda: (_memory.pop(key, None), cache.delete(key)))


def connect_row_cache_signals() -> None:
    """Never carry a row read beside one request's session into the thread's next request."""
    request_finished.connect(_forget_prefetched, dispatch_uid="row_cache.prefetched")
