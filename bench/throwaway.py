"""A Redis and a PostgreSQL cluster of one run's own, on free ports, to stop and start at will.

Never the machine's services: other runs and tests use those. PostgreSQL refuses to run as
root, so under root the cluster belongs to the `postgres` user Debian's package makes; its
superuser is `portal`, with trust authentication on 127.0.0.1 only.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.support import free_port


def _wait(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.1)


@dataclass
class ThrowawayRedis:
    """One redis-server on `port`, keeping nothing on disk."""

    directory: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen | None = field(default=None, repr=False)

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def client(self, db: int = 0):
        """Return a client that asks once (redis-py's own retries wait seconds on a dead one)."""
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        return redis.Redis(
            host="127.0.0.1",
            port=self.port,
            db=db,
            socket_connect_timeout=1,
            retry=Retry(NoBackoff(), 0),
        )

    def answers(self) -> bool:
        import redis

        client = self.client()
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        program = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.process = subprocess.Popen(  # noqa: S603 (our own command line)
            [program, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.directory)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        _wait(self.answers, 30, f"redis-server on port {self.port}")

    def stop(self) -> None:
        """Stop it as a crash would: what it held is gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        _wait(lambda: not self.answers(), 30, "redis-server to stop")


# No durability: the cluster lives for one run, and every fsync costs seconds on a busy disk.
SERVER_OPTIONS = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"


@dataclass
class ThrowawayPostgres:
    """A PostgreSQL cluster in `directory`, listening on 127.0.0.1:`port` only."""

    directory: Path
    port: int = field(default_factory=free_port)
    superuser: str = "portal"

    @staticmethod
    def binaries() -> Path | None:
        """Return Debian's PostgreSQL server programs' directory (the newest), or None."""
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=_major_version)
        return Path(found[-1]).parent if found else None

    @property
    def data(self) -> Path:
        return self.directory / "data"

    @property
    def log(self) -> Path:
        return self.directory / "server.log"

    def url(self, database: str, **query: str) -> str:
        """Return a DATABASE_URL for one of its databases."""
        options = "&".join(f"{name}={value}" for name, value in query.items())
        return f"postgres://{self.superuser}@127.0.0.1:{self.port}/{database}" + (
            f"?{options}" if options else ""
        )

    def run(self, program: str, *arguments: str, check: bool = True):
        """Run one of the server programs as the cluster's owner; raise with its output."""
        owner = pwd.getpwnam("postgres") if os.geteuid() == 0 else None
        done = subprocess.run(  # noqa: S603 (our own command line)
            [str(self.binaries() / program), *arguments],
            user=owner.pw_uid if owner else None,
            group=owner.pw_gid if owner else None,
            cwd=self.directory,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"{program} failed:\n{done.stdout}{done.stderr}{self.tail()}")
        return done

    def create(self) -> None:
        """Make the cluster (initdb) and start it."""
        self.directory.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.directory, "postgres", "postgres")
            # The postgres user must reach its directory through a private (mkdtemp) parent:
            # only those under the temporary directory are opened, for passing through only.
            temporary = Path(tempfile.gettempdir()).resolve()
            for parent in self.directory.resolve().parents:
                if parent == temporary or temporary not in parent.parents:
                    break
                parent.chmod(parent.stat().st_mode | 0o111)
        self.run("initdb", "-D", str(self.data), "-A", "trust", "-U", self.superuser,
                 "-E", "UTF8", "--no-sync", "--no-instructions")  # fmt: skip
        self.start()

    def start(self) -> None:
        """Start the server and wait until it takes connections."""
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 "
        self.run("pg_ctl", "start", "-w", "-t", "90", "-D", str(self.data), "-l", str(self.log),
                 "-o", options + SERVER_OPTIONS)  # fmt: skip

    def stop(self) -> None:
        """Stop the server at once: sessions are cut off, as in a restart or a failover."""
        self.run("pg_ctl", "stop", "-w", "-t", "90", "-m", "fast", "-D", str(self.data))

    def create_database(self, name: str) -> None:
        self.run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", self.superuser, name)

    def answers(self) -> bool:
        import psycopg

        try:
            with psycopg.connect(self.url("postgres"), connect_timeout=2) as connection:
                return connection.execute("SELECT 1").fetchone() == (1,)
        except psycopg.Error:
            return False

    def tail(self, last: int = 2000) -> str:
        """Return the end of the server's log (for error messages)."""
        try:
            return self.log.read_text(errors="replace")[-last:]
        except OSError:
            return ""

    def destroy(self) -> None:
        """Stop it at once and delete its files."""
        if (self.data / "postmaster.pid").exists():
            self.run("pg_ctl", "stop", "-m", "immediate", "-D", str(self.data), check=False)
        shutil.rmtree(self.directory, ignore_errors=True)


def _major_version(path: str) -> int:
    version = Path(path).parts[-3]
    return int(version) if version.isdigit() else 0
