"""The cache in the database, for the keys Redis holds while it cannot be reached (ops.cache).

Every operation is one SQL statement, atomic under concurrency like Redis's own: add is an
INSERT ... ON CONFLICT that only replaces an expired row, incr an UPDATE ... RETURNING, so the
sign-in throttle's limits hold across processes during an outage as they do on Redis. (Django's
DatabaseCache reads then writes: simultaneous sign-ins would pass a limit there.) Each runs in
a savepoint, so that a failing statement never breaks a transaction around it.

A key deleted during the outage leaves a tombstone (a row with neither value nor number), so
that the deletion reaches Redis too when it returns (a lock lifted meanwhile stays lifted);
everything reads a tombstone as no key. `claim` takes rows away for good (DELETE ...
RETURNING), so that of several processes coming back to Redis each row is moved by one.
"""

from __future__ import annotations

import hashlib
import pickle
import time
from collections.abc import Iterable
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.db import connection, transaction

# ops.models.CacheFallbackEntry's table and key length (a cache may be made before the models
# load, so the model is not imported here).
TABLE = "ops_cache_fallback"
KEY_LENGTH = 255
# Kept "for ever" (timeout None): far beyond any row's life.
NEVER = 1e13
# A tombstone waits this long for Redis to come back (then the housekeeping sweep takes it).
TOMBSTONE_SECONDS = 24 * 3600
# What claim() returns for a key deleted during the outage.
TOMBSTONE = object()
# A row that holds a value: not a tombstone.
LIVE = "(value IS NOT NULL OR number IS NOT NULL)"


def _stored(value: Any) -> tuple[bytes | None, int | None]:
    """Return the value's columns: an int as a number (to count), anything else pickled."""
    if type(value) is int:
        return None, value
    return pickle.dumps(value, pickle.HIGHEST_PROTOCOL), None


def _loaded(value: bytes | memoryview | None, number: int | None) -> Any:
    if number is not None:
        return number
    return pickle.loads(bytes(value))  # noqa: S301 (written by this module only)


class DatabaseFallbackCache(BaseCache):
    """Django's cache API over the ops_cache_fallback table, each operation atomic."""

    def _db_key(self, key: str, version: int | None) -> str:
        full = self.make_key(key, version=version)  # a long key is kept under its digest
        if len(full) > KEY_LENGTH:
            full = "sha256:" + hashlib.sha256(full.encode()).hexdigest()
        return full

    def _expires(self, timeout) -> float:
        expires = self.get_backend_timeout(timeout)
        return NEVER if expires is None else expires

    def _run(self, sql: str, params: Iterable[Any]) -> tuple[list[tuple], int]:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql.format(table=connection.ops.quote_name(TABLE)), list(params))
            rows = cursor.fetchall() if cursor.description else []
            return rows, cursor.rowcount

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None) -> bool:
        stored, number = _stored(value)
        _, count = self._run(
            "INSERT INTO {table} (cache_key, value, number, expires) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (cache_key) DO UPDATE SET value = EXCLUDED.value, "
            "number = EXCLUDED.number, expires = EXCLUDED.expires "
            "WHERE {table}.expires <= %s OR ({table}.value IS NULL AND {table}.number IS NULL)",
            [self._db_key(key, version), stored, number, self._expires(timeout), time.time()],
        )
        return count == 1

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None) -> None:
        self.set_many({key: value}, timeout, version)

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None) -> list:
        expires = self._expires(timeout)
        for key, value in data.items():
            stored, number = _stored(value)
            self._run(
                "INSERT INTO {table} (cache_key, value, number, expires) "
                "VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (cache_key) DO UPDATE SET value = EXCLUDED.value, "
                "number = EXCLUDED.number, expires = EXCLUDED.expires",
                [self._db_key(key, version), stored, number, expires],
            )
        return []

    def get(self, key, default=None, version=None) -> Any:
        return self.get_many([key], version).get(key, default)

    def get_many(self, keys, version=None) -> dict:
        db_keys = {self._db_key(key, version): key for key in keys}
        if not db_keys:
            return {}
        marks = ", ".join(["%s"] * len(db_keys))
        rows, _ = self._run(
            f"SELECT cache_key, value, number FROM {{table}} WHERE cache_key IN ({marks}) "  # noqa: S608 (placeholders)
            f"AND expires > %s AND {LIVE}",
            [*db_keys, time.time()],
        )
        return {db_keys[db_key]: _loaded(value, number) for db_key, value, number in rows}

    def has_key(self, key, version=None) -> bool:
        return key in self.get_many([key], version)

    def incr(self, key, delta=1, version=None) -> int:
        rows, _ = self._run(
            "UPDATE {table} SET number = number + %s "
            "WHERE cache_key = %s AND expires > %s AND number IS NOT NULL RETURNING number",
            [delta, self._db_key(key, version), time.time()],
        )
        if not rows:
            raise ValueError(f"Key '{key}' not found.")
        return rows[0][0]

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None) -> bool:
        _, count = self._run(
            f"UPDATE {{table}} SET expires = %s "  # noqa: S608 (no input in it)
            f"WHERE cache_key = %s AND expires > %s AND {LIVE}",
            [self._expires(timeout), self._db_key(key, version), time.time()],
        )
        return count == 1

    def delete(self, key, version=None) -> bool:
        """Delete a key, leaving a tombstone for Redis; return whether it held a value."""
        existed = self.has_key(key, version)
        self.delete_many([key], version)
        return existed

    def delete_many(self, keys, version=None) -> None:
        expires = time.time() + TOMBSTONE_SECONDS
        for key in keys:
            self._run(
                "INSERT INTO {table} (cache_key, value, number, expires) "
                "VALUES (%s, NULL, NULL, %s) ON CONFLICT (cache_key) DO UPDATE "
                "SET value = NULL, number = NULL, expires = EXCLUDED.expires",
                [self._db_key(key, version), expires],
            )

    def claim(self, batch: int) -> tuple[int, list[tuple[str, Any, float]]]:
        """Take up to `batch` rows away for good; return how many, and the live ones.

        Each live row is (key, value, expires): the whole key (prefix and version made), as
        Redis holds it, and TOMBSTONE for a key deleted meanwhile. Expired rows only go.
        """
        rows, _ = self._run(
            "DELETE FROM {table} WHERE cache_key IN "
            "(SELECT cache_key FROM {table} LIMIT %s) "
            "RETURNING cache_key, value, number, expires",
            [batch],
        )
        now = time.time()
        live = [
            (
                key,
                TOMBSTONE if value is None and number is None else _loaded(value, number),
                expires,
            )
            for key, value, number, expires in rows
            if expires > now
        ]
        return len(rows), live

    def clear(self) -> None:
        self._run("DELETE FROM {table}", [])


def delete_expired(now: float | None = None) -> int:
    """Delete the rows whose time is up (housekeeping); return how many went."""
    from ops.models import CacheFallbackEntry

    return CacheFallbackEntry.objects.filter(expires__lte=now or time.time()).delete()[0]
