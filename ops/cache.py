"""Django's RedisCache, reusing one Redis client per connection pool.

Django's backend builds a new redis.Redis object for every cache call (RedisCacheClient.
get_client); with redis-py 5+ that costs about as much as the call itself, and a signed-in page
makes several (session, user, upstream health). The client is thread-safe and only wraps the
pool, so one per pool does the same work for less.
"""

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


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


class RedisCache(DjangoRedisCache):
    """Django's RedisCache (same options, same keys), with a client per pool kept."""

    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = _ReusingClient
