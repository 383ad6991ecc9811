"""A throwaway PostgreSQL cluster on a free port, for tests that stop and restart PostgreSQL.

Debian's server programs (/usr/lib/postgresql/<version>/bin/initdb and pg_ctl) run it from a
temporary directory, never the machine's PostgreSQL. Tests marked `postgres_cluster` use it:
they are skipped when the programs are missing, unless REQUIRE_POSTGRES_CLUSTER is set (CI),
where they fail instead. PostgreSQL refuses to run as root, so as root it runs as the
`postgres` user the Debian package makes.
"""

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.serving import free_port

SERVER_PROGRAMS = "/usr/lib/postgresql/*/bin"
SUPERUSER = "portal"
# No durability: the cluster lives for one test, and every fsync costs seconds on a busy disk.
SERVER_OPTIONS = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"


def server_programs() -> Path:
    """Return the newest PostgreSQL's bin directory; skip the test if none (fail in CI)."""
    found = sorted(
        (Path(path) for path in glob.glob(SERVER_PROGRAMS) if Path(path, "pg_ctl").exists()),
        key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0,
    )
    if not found:
        problem = f"No PostgreSQL server programs (initdb, pg_ctl) in {SERVER_PROGRAMS}"
        if os.environ.get("REQUIRE_POSTGRES_CLUSTER"):
            pytest.fail(f"{problem} (REQUIRE_POSTGRES_CLUSTER is set, so this test must run)")
        pytest.skip(problem)
    return found[-1]


@dataclass
class Cluster:
    """A running PostgreSQL of one test: its programs, data directory and port."""

    programs: Path
    directory: Path
    port: int
    owner: pwd.struct_passwd | None  # whom the server runs as, when the test runs as root

    @property
    def data(self) -> Path:
        return self.directory / "data"

    @property
    def log(self) -> Path:
        return self.directory / "server.log"

    def url(self, database: str, **query: str) -> str:
        """Return a DATABASE_URL for one of its databases."""
        options = "&".join(f"{name}={value}" for name, value in query.items())
        return f"postgres://{SUPERUSER}@127.0.0.1:{self.port}/{database}" + (
            f"?{options}" if options else ""
        )

    def run(self, program: str, *args: str) -> None:
        """Run one of the server programs as the cluster's owner; fail with its output."""
        done = subprocess.run(
            [str(self.programs / program), *args],
            user=self.owner.pw_uid if self.owner else None,
            group=self.owner.pw_gid if self.owner else None,
            cwd=self.directory,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{program} failed:\n{done.stdout}{done.stderr}{self.tail()}"

    def start(self) -> None:
        """Start the server and wait until it takes connections."""
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 "
        self.run("pg_ctl", "start", "-w", "-t", "90", "-D", str(self.data), "-l", str(self.log),
                 "-o", options + SERVER_OPTIONS)  # fmt: skip

    def stop(self) -> None:
        """Stop the server at once: sessions are cut off, as in a restart or a failover."""
        self.run("pg_ctl", "stop", "-w", "-t", "90", "-m", "fast", "-D", str(self.data))

    def create_database(self, name: str) -> None:
        self.run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", SUPERUSER, name)

    def tail(self, last: int = 2000) -> str:
        """Return the end of the server's log (for assertion messages)."""
        try:
            return self.log.read_text(errors="replace")[-last:]
        except OSError:
            return ""


@contextmanager
def postgres_cluster() -> Iterator[Cluster]:
    """Make, start and finally remove a PostgreSQL cluster of the test's own."""
    programs = server_programs()
    owner = pwd.getpwnam("postgres") if os.geteuid() == 0 else None
    directory = Path(tempfile.mkdtemp(prefix="portal-pg-"))
    if owner is not None:
        os.chown(directory, owner.pw_uid, owner.pw_gid)
    cluster = Cluster(programs, directory, free_port(), owner)
    try:
        cluster.run("initdb", "-D", str(cluster.data), "-A", "trust", "-U", SUPERUSER,
                    "-E", "UTF8", "--no-sync", "--no-instructions")  # fmt: skip
        cluster.start()
        yield cluster
    finally:
        if (cluster.data / "postmaster.pid").exists():
            subprocess.run(
                [str(programs / "pg_ctl"), "stop", "-m", "immediate", "-D", str(cluster.data)],
                user=owner.pw_uid if owner else None,
                capture_output=True,
                timeout=60,
                check=False,
            )
        shutil.rmtree(directory, ignore_errors=True)
