"""A redis-server of the test's own on a free port, which the test may stop and start again.

Never the machine's Redis: other tests (and other runs) use that one.
"""

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bench.throwaway import ThrowawayRedis


@contextmanager
def own_redis() -> Iterator[ThrowawayRedis]:
    """Start a redis-server for this test alone; skipped if the machine has no redis-server."""
    if shutil.which("redis-server") is None:
        if os.environ.get("REQUIRE_REDIS"):
            pytest.fail("redis-server is not installed (REQUIRE_REDIS is set)")
        pytest.skip("redis-server is not installed")
    with tempfile.TemporaryDirectory(prefix="own-redis-") as directory:
        server = ThrowawayRedis(Path(directory))
        server.start()
        try:
            yield server
        finally:
            server.stop()
