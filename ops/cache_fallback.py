"""The cache in the database, for the keys Redis holds while it cannot be reached (ops.cache).

Every operation is one SQL statement, atomic under concurrency like Redis's own: add is an
INSERT ... ON CONFLICT that only replaces an expired row, incr an UPDATE ... RETURNING, so the
sign-in throttle's limits hold across processes during an outage as they do on Redis. (Django's
DatabaseCache reads then writes: simultaneous sign-ins would pass a limit there.) Each runs in
a savepoint, so that a failing statement never breaks a transaction around it.
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
            "WHERE {table}.expires <= %s",
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
            "AND expires > %s",
            [*db_keys, time.time()],
        )
        return {db_keys[db_key]: _loaded(value, number) for db_key, value, number in rows}

    def entries(self, keys, version=None) -> dict[str, tuple[Any, float]]:
        """Return each live key's value and when it expires (seconds since the epoch)."""
        db_keys = {self._db_key(key, version): key for key in keys}
        if not db_keys:
            return {}
        marks = ", ".join(["%s"] * len(db_keys))
        rows, _ = self._run(
            f"SELECT cache_key, value, number, expires FROM {{table}} "  # noqa: S608 (placeholders)
            f"WHERE cache_key IN ({marks}) AND expires > %s",
            [*db_keys, time.time()],
        )
        return {db_keys[k]: (_loaded(value, number), expires) for k, value, number, expires in rows}

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
            "UPDATE {table} SET expires = %s WHERE cache_key = %s AND expires > %s",
            [self._expires(timeout), self._db_key(key, version), time.time()],
        )
        return count == 1

    def delete(self, key, version=None) -> bool:
        _, count = self._run(
            "DELETE FROM {table} WHERE cache_key = %s", [self._db_key(key, version)]
        )
        return count == 1

    def delete_many(self, keys, version=None) -> None:
        db_keys = [self._db_key(key, version) for key in keys]
        if db_keys:
            marks = ", ".join(["%s"] * len(db_keys))
            sql = f"DELETE FROM {{table}} WHERE cache_key IN ({marks})"  # noqa: S608 (placeholders)
            self._run(sql, db_keys)

    def clear(self) -> None:
        self._run("DELETE FROM {table}", [])


def delete_expired(now: float | None = None) -> int:
    """Delete the rows whose time is up (housekeeping); return how many went."""
    from ops.models import CacheFallbackEntry

    return CacheFallbackEntry.objects.filter(expires__lte=now or time.time()).delete()[0]
