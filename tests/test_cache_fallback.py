"""Without Redis the cache answers from the database: counts and locks hold, copies are misses."""

import logging
import time

import pytest

from accounts.sign_in_throttle import count_up
from ops.cache import RedisCache, _Outage
from ops.cache_fallback import DatabaseFallbackCache, delete_expired
from ops.models import CacheFallbackEntry
from tests.own_redis import own_redis
from tests.shared_redis import free_port

pytestmark = pytest.mark.django_db

COPY = "portal.user:7"  # a copy of a database row (CACHE_COPY_PREFIXES)
COUNT = "signin:fail:account:abc"  # a count the database must keep meanwhile


def redis_cache(url: str) -> RedisCache:
    return RedisCache(url, {"OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 2}})


def test_the_database_store_counts_adds_and_expires_as_redis_does():
    store = DatabaseFallbackCache({})

    assert store.add("count", 0, timeout=60) is True
    assert store.add("count", 5, timeout=60) is False  # running: add does nothing
    assert [store.incr("count") for _ in range(3)] == [1, 2, 3]
    assert store.get("count") == 3

    store.set("lock", {"until": "later"}, timeout=60)
    store.set("x" * 400, "a long key is kept under its digest", timeout=60)
    assert store.get_many(["lock", "x" * 400, "nothing"]) == {
        "lock": {"until": "later"},
        "x" * 400: "a long key is kept under its digest",
    }

    store.set("gone", 1, timeout=60)
    assert store.touch("gone", timeout=-1)  # its time is up: as expired
    assert store.get("gone", "missing") == "missing"
    with pytest.raises(ValueError):
        store.incr("gone")
    assert store.add("gone", 10, timeout=60) is True  # an expired key may be added again
    assert store.get("gone") == 10

    assert store.delete("lock") is True and store.get("lock") is None
    store.set("old", 1, timeout=-1)
    assert delete_expired() >= 1
    assert not CacheFallbackEntry.objects.filter(cache_key__endswith="old").exists()


def test_without_redis_counts_go_on_in_the_database_and_copies_miss(settings, caplog):
    settings.REDIS_RETRY_CAP = 0  # try Redis again at every call
    cache = redis_cache(f"redis://127.0.0.1:{free_port()}/0")  # nobody listens there

    with caplog.at_level(logging.WARNING, logger="ops.cache"):
        cache.set(COPY, "a user row", 300)
        assert cache.get(COPY) is None  # a miss: the caller reads the database itself
        assert [count_up_on(cache, COUNT) for _ in range(3)] == [1, 2, 3]
        assert cache.get_many([COUNT, COPY]) == {COUNT: 3}

    assert cache.degraded
    assert not CacheFallbackEntry.objects.filter(cache_key__contains="portal.user").exists()
    outages = [r for r in caplog.records if "cannot be reached" in r.getMessage()]
    assert len(outages) == 1  # once per outage, not per call


def test_when_redis_returns_kept_keys_move_back_and_stale_copies_go(settings, caplog):
    settings.REDIS_RETRY_CAP = 0
    with own_redis() as redis_server:
        cache = redis_cache(redis_server.url())
        cache.set(COPY, "the row before the outage", 300)
        redis_server.stop()

        cache.delete(COPY)  # the user changed meanwhile: this copy must not come back
        count_up_on(cache, COUNT, window=600)
        count_up_on(cache, COUNT, window=600)
        assert cache.degraded

        redis_server.start()  # empty, as after a restart; the copy is put back by hand
        redis_server.client().set(":1:" + COPY, b"stale")
        with caplog.at_level(logging.WARNING, logger="ops.cache"):
            assert cache.get(COUNT) == 2  # on Redis again, the count carried over

        assert not cache.degraded
        assert redis_server.client().get(":1:" + COPY) is None
        assert 590 <= redis_server.client().ttl(":1:" + COUNT) <= 600
        assert not CacheFallbackEntry.objects.exists()
        assert any("answers again" in r.getMessage() for r in caplog.records)


def test_two_processes_coming_back_one_after_the_other_lose_no_count_lock_or_lifting(settings):
    settings.REDIS_RETRY_CAP = 0
    lock, lifted = "signin:lock:account:abc", "signin:lock:account:def"
    with own_redis() as redis_server:
        first = redis_cache(redis_server.url())
        second = redis_cache(redis_server.url())
        second._outage = _Outage()  # as another process: its own view of Redis
        redis_server.stop()

        count_up_on(first, COUNT, window=600)
        count_up_on(second, COUNT, window=600)
        second.set(lock, True, 600)
        first.delete(lifted)  # a lock lifted by staff meanwhile
        assert first.degraded and second.degraded

        redis_server.start()
        raw = redis_server.client()
        raw.set(":1:" + lifted, b"1")  # as if Redis had kept it through the outage
        assert first.get(COUNT) == 2  # the first process is back: it moved every kept row
        assert not first.degraded and second.degraded
        assert first.get(lock) is True
        assert raw.get(":1:" + lifted) is None  # the lifting reached Redis

        second._outage.retry_at = 0  # still on the database a moment longer: it counts there
        second._outage.since = second._outage.since or 1.0
        second._fallback.add(COUNT, 0, 600)
        second._fallback.incr(COUNT)
        assert second.get(COUNT) == 3  # back in turn: its count added to Redis's, not lost
        assert first.get(lock) is True
        assert not CacheFallbackEntry.objects.exists()


def count_up_on(cache, key: str, window: int = 60) -> int:
    """accounts.sign_in_throttle.count_up, on this cache rather than the default one."""
    from unittest import mock

    with mock.patch("accounts.sign_in_throttle.cache", cache):
        return count_up(key, window=window)


def test_a_slow_redis_is_given_up_quickly(settings):
    """A Redis that never answers costs a page at most its timeouts, then nothing."""
    import socket

    settings.REDIS_RETRY_CAP = 60
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        cache = RedisCache(
            f"redis://127.0.0.1:{silent.getsockname()[1]}/0",
            {"OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}},
        )
        started = time.monotonic()
        assert cache.get(COPY) is None
        for _ in range(20):  # Redis is not asked again before its retry time
            assert cache.get(COPY) is None
        # One timeout is about 0.5 s; asking Redis at each of the 21 calls would take 10 s.
        assert time.monotonic() - started < 6
        assert cache.degraded
