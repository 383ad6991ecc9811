"""A redis-server of the test's own on a free port, which the test may stop and start again.

Never the machine's Redis: other tests (and other runs) use that one.
"""

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

from tests.shared_redis import free_port, wait_until


@dataclass
class OwnRedis:
    """One redis-server process on `port`, keeping nothing on disk."""

    port: int
    directory: str
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self):
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # Asked once: redis-py's own retries would wait seconds on a stopped server.
        return redis.Redis(
            host="127.0.0.1", port=self.port, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0)
        )

    def answers(self) -> bool:
        import redis

        try:
            return bool(self.client().ping())
        except redis.RedisError:
            return False

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.directory],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_until(self.answers, timeout=30, what=f"redis-server on port {self.port}")

    def stop(self) -> None:
        """Stop it as a crash or a restart would: what it held is gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        wait_until(lambda: not self.answers(), timeout=30, what="redis-server to stop")


@contextmanager
def own_redis() -> Iterator[OwnRedis]:
    """Start a redis-server for this test alone; skipped if the machine has no redis-server."""
    if shutil.which("redis-server") is None:
        if os.environ.get("REQUIRE_REDIS"):
            pytest.fail("redis-server is not installed (REQUIRE_REDIS is set)")
        pytest.skip("redis-server is not installed")
    with tempfile.TemporaryDirectory(prefix="own-redis-") as directory:
        server = OwnRedis(free_port(), directory)
        server.start()
        try:
            yield server
        finally:
            server.stop()
