"""A throwaway PostgreSQL cluster on a free port, for tests that stop and restart PostgreSQL.

bench.throwaway's cluster (Debian's initdb and pg_ctl, from a temporary directory), never the
machine's PostgreSQL. Tests marked `postgres_cluster` use it: they are skipped when the server
programs are missing, unless REQUIRE_POSTGRES_CLUSTER is set (CI), where they fail instead.
"""

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bench.throwaway import ThrowawayPostgres

Cluster = ThrowawayPostgres


@contextmanager
def postgres_cluster() -> Iterator[Cluster]:
    """Make, start and finally remove a PostgreSQL cluster of the test's own."""
    if Cluster.binaries() is None:
        problem = "No PostgreSQL server programs (initdb, pg_ctl) in /usr/lib/postgresql/*/bin"
        if os.environ.get("REQUIRE_POSTGRES_CLUSTER"):
            pytest.fail(f"{problem} (REQUIRE_POSTGRES_CLUSTER is set, so this test must run)")
        pytest.skip(problem)
    cluster = Cluster(Path(tempfile.mkdtemp(prefix="portal-pg-")))
    try:
        cluster.create()
        yield cluster
    finally:
        cluster.destroy()
