"""Django's RedisCache, reusing one client per pool, and going on from the database without Redis.

Django's backend builds a new redis.Redis object for every cache call (RedisCacheClient.
get_client); with redis-py 5+ that costs about as much as the call itself, and a signed-in page
makes several (session, user, upstream health). The client is thread-safe and only wraps the
pool, so one per pool does the same work for less.

Redis is a help, never a single point of failure. When a call fails (Redis stopped, restarting,
unreachable), this process logs it once and answers every cache call from the database until
Redis answers again, trying it again after 1, 2, 4... (at most REDIS_RETRY_CAP) seconds:

- Keys that only copy a database row (CACHE_COPY_PREFIXES: sessions, the signed-in user, the
  school's settings, rendered pages) are misses meanwhile, and writes to them are skipped: the
  callers then read the database itself, as they do on any miss. Nothing is kept twice.
- Every other key (the sign-in throttle's counts and locks, card refusals, the upstream circuit)
  is kept in the database (ops.cache_fallback), with add and incr as atomic there as on Redis,
  so limits still hold.

Once Redis answers, what was written meanwhile is put right there: the copies this process
wrote are deleted from Redis (they may be older than the database), and every key the database
kept is claimed (by one process only) and moved back with the time it has left: a count is
added to whatever Redis counted meanwhile, a lock or other value replaces Redis's, a key
deleted meanwhile (a lock lifted) is deleted. Then the process goes on with Redis, and logs that
once. A process that is still without Redis for a few seconds after another came back keeps
writing to the database; its rows are moved when it comes back in turn.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient
from prometheus_client import Counter, Gauge
from redis.exceptions import RedisError

from ops.cache_fallback import NEVER, TOMBSTONE, DatabaseFallbackCache

logger = logging.getLogger(__name__)

FALLBACKS = Counter(
    "portal_cache_fallbacks",
    "Cache operations answered without Redis (from the database, or as a miss), by operation.",
    ["operation"],
)
DEGRADED = Gauge(
    "portal_cache_degraded",
    "1 while a process answers cache calls without Redis (the most of any process), else 0.",
    multiprocess_mode="livemax",
)
# Copies written or dropped during an outage, deleted from Redis when it returns; beyond this
# many the rest are left to expire (a copy lives at most ROW_CACHE_SECONDS).
STALE_COPIES_LIMIT = 10_000
RECOVERY_BATCH = 500


class _ReusingClient(RedisCacheClient):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, object] = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client


class _Outage:
    """Whether this process is without Redis, since when, and when to try it again."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.since: float | None = None
        self.retry_at = 0.0
        self.failures = 0
        self.stale_copies: dict[str, None] = {}  # raw keys, in the order first written

    def skip_redis(self) -> bool:
        return self.since is not None and time.monotonic() < self.retry_at

    def begin(self, error: Exception) -> None:
        with self.lock:
            self.failures += 1
            delay = min(2 ** (self.failures - 1), settings.REDIS_RETRY_CAP)
            self.retry_at = time.monotonic() + delay
            if self.since is None:
                self.since = time.monotonic()
                DEGRADED.set(1)
                # The kind only: a message may name the host and its password.
                logger.warning(
                    "Redis cannot be reached (%s): answering the cache from the database "
                    "until it returns",
                    type(error).__name__,
                )

    def note_stale(self, copies: list[str]) -> None:
        """Remember copies Redis may hold older than the database, to delete there later."""
        with self.lock:
            for key in copies:
                if len(self.stale_copies) >= STALE_COPIES_LIMIT:
                    break
                self.stale_copies[key] = None

    def end(self) -> list[str] | None:
        """End the outage; return the stale copies, or None if another thread ended it."""
        with self.lock:
            if self.since is None:
                return None
            lasted = time.monotonic() - self.since
            self.since, self.failures = None, 0
            stale, self.stale_copies = list(self.stale_copies), {}
        DEGRADED.set(0)
        logger.warning("Redis answers again after %.0f s: the cache is back on Redis", lasted)
        return stale


_OUTAGES: dict[str, _Outage] = {}
_OUTAGES_LOCK = threading.Lock()


class RedisCache(DjangoRedisCache):
    """Django's RedisCache (same options, same keys): a client per pool, the database as backup."""

    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = _ReusingClient
        self._fallback = DatabaseFallbackCache(params)
        # Django makes a cache object per thread: the outage is the process's, one per server.
        with _OUTAGES_LOCK:
            self._outage = _OUTAGES.setdefault(str(server), _Outage())

    @property
    def degraded(self) -> bool:
        """Whether this process is answering cache calls without Redis."""
        return self._outage.since is not None

    def redis_answers(self) -> bool:
        """Ask Redis itself, whatever this process last found (for /readyz)."""
        try:
            return bool(self._cache.get_client(write=True).ping())
        except RedisError:
            return False

    def _is_copy(self, key: str) -> bool:
        return key.startswith(tuple(settings.CACHE_COPY_PREFIXES))

    def _call(self, operation: str, keys, on_redis: Callable[[], Any], kept, missing=None):
        """Run on Redis; without it, run `kept` on the keys the database keeps, or miss.

        `missing` is the answer when every key is a copy (an exception is raised).
        """
        if not self._outage.skip_redis() and self._back_on_redis():
            try:
                return on_redis()
            except RedisError as error:
                self._outage.begin(error)
        FALLBACKS.labels(operation).inc()
        own = [key for key in keys if not self._is_copy(key)]
        if operation not in ("get", "get_many", "has_key") and len(own) < len(keys):
            self._outage.note_stale([key for key in keys if self._is_copy(key)])
        if own or not keys:
            return kept(own)
        if isinstance(missing, Exception):
            raise missing
        return missing

    def _back_on_redis(self) -> bool:
        """Return whether to use Redis: it was never gone, or it answers again (put right)."""
        if self._outage.since is None:
            return True
        try:
            self._cache.get_client(write=True).ping()
        except RedisError as error:
            self._outage.begin(error)
            return False
        self._recover()
        return True

    def _recover(self) -> None:
        """Put right in Redis what was written without it; never fail the caller.

        The copies this process wrote go (they may be older than the database). Every row the
        database kept, whoever wrote it, is claimed and moved: counts are added to what Redis
        counts meanwhile, other values replace Redis's, tombstones delete.
        """
        copies = self._outage.end()
        if copies is None:
            return
        moved = 0
        try:
            for start in range(0, len(copies), RECOVERY_BATCH):
                super().delete_many(copies[start : start + RECOVERY_BATCH])
            while True:
                claimed, rows = self._fallback.claim(RECOVERY_BATCH)
                for key, value, expires in rows:
                    self._move_back(key, value, expires)
                moved += len(rows)
                if claimed < RECOVERY_BATCH:
                    break
        except RedisError as error:  # gone again: what is left is moved next time
            self._outage.begin(error)
        except Exception as error:  # the database: its rows are moved at the next recovery
            logger.warning("Cache keys not moved back to Redis (%s)", type(error).__name__)
        if moved:
            logger.info("Moved %d cache keys kept in the database back to Redis", moved)

    def _move_back(self, key: str, value: Any, expires: float) -> None:
        """Write one claimed row to Redis under its whole key, with the time it has left."""
        if key.startswith("sha256:"):
            return  # a key too long for the table, kept under its digest: let it go
        client = self._cache
        if value is TOMBSTONE:
            client.delete(key)
            return
        left = None if expires >= NEVER else max(1, int(expires - time.time()))
        if type(value) is not int:
            client.set(key, value, left)
        elif not client.add(key, value, left):
            with contextlib.suppress(ValueError):  # expired in Redis meanwhile: let it go
                client.incr(key, value)  # counted on Redis meanwhile too: both counts hold

    # Django's cache API: each call on Redis, or without it meanwhile.

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._call(
            "add", [key], lambda: super(RedisCache, self).add(key, value, timeout, version),
            lambda own: self._fallback.add(key, value, timeout, version), False,
        )  # fmt: skip

    def get(self, key, default=None, version=None):
        return self._call(
            "get", [key], lambda: super(RedisCache, self).get(key, default, version),
            lambda own: self._fallback.get(key, default, version), default,
        )  # fmt: skip

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        self._call(
            "set", [key], lambda: super(RedisCache, self).set(key, value, timeout, version),
            lambda own: self._fallback.set(key, value, timeout, version),
        )  # fmt: skip

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        return self._call(
            "touch", [key], lambda: super(RedisCache, self).touch(key, timeout, version),
            lambda own: self._fallback.touch(key, timeout, version), False,
        )  # fmt: skip

    def delete(self, key, version=None):
        return self._call(
            "delete", [key], lambda: super(RedisCache, self).delete(key, version),
            lambda own: self._fallback.delete(key, version), False,
        )  # fmt: skip

    def get_many(self, keys, version=None):
        keys = list(keys)
        return self._call(
            "get_many", keys, lambda: super(RedisCache, self).get_many(keys, version),
            lambda own: self._fallback.get_many(own, version), {},
        )  # fmt: skip

    def has_key(self, key, version=None):
        return self._call(
            "has_key", [key], lambda: super(RedisCache, self).has_key(key, version),
            lambda own: self._fallback.has_key(key, version), False,
        )  # fmt: skip

    def incr(self, key, delta=1, version=None):
        return self._call(
            "incr", [key], lambda: super(RedisCache, self).incr(key, delta, version),
            lambda own: self._fallback.incr(key, delta, version),
            ValueError(f"Key '{key}' not found."),
        )  # fmt: skip

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        return self._call(
            "set_many", list(data),
            lambda: super(RedisCache, self).set_many(data, timeout, version),
            lambda own: self._fallback.set_many({k: data[k] for k in own}, timeout, version), [],
        )  # fmt: skip

    def delete_many(self, keys, version=None):
        keys = list(keys)
        self._call(
            "delete_many", keys, lambda: super(RedisCache, self).delete_many(keys, version),
            lambda own: self._fallback.delete_many(own, version),
        )  # fmt: skip

    def clear(self):
        return self._call(
            "clear", [], lambda: super(RedisCache, self).clear(), lambda own: self._fallback.clear()
        )
