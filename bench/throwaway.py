"""A Redis and a PostgreSQL cluster of one run's own, on free ports, to stop and start at will.

Never the machine's services: other runs and tests use those. PostgreSQL refuses to run as
root, so under root the cluster belongs to the `postgres` user (runuser); its superuser is
named after whoever runs this, with trust authentication on 127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import getpass
import glob
import os
import shutil
import signal
import subprocess
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


@dataclass
class ThrowawayPostgres:
    """A PostgreSQL cluster in `directory`, listening on 127.0.0.1:`port` only."""

    directory: Path
    port: int = field(default_factory=free_port)
    superuser: str = field(default_factory=getpass.getuser)

    @staticmethod
    def binaries() -> Path | None:
        """Return Debian's PostgreSQL server programs' directory (the newest), or None."""
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=_major_version)
        return Path(found[-1]).parent if found else None

    def url(self, database: str) -> str:
        return f"postgres://{self.superuser}@127.0.0.1:{self.port}/{database}"

    def _run(self, program: str, *arguments: str, check: bool = True):
        command = [str(self.binaries() / program), *arguments]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(  # noqa: S603 (our own command line)
            command, capture_output=True, text=True, timeout=120
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"{program} failed: {done.stderr.strip() or done.stdout.strip()}")
        return done

    def create(self) -> None:
        """Make the cluster (initdb) and start it."""
        self.directory.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.directory, "postgres", "postgres")
            # The postgres user must reach its directory through a private (mkdtemp) parent.
            for parent in self.directory.parents:
                if parent == Path("/"):
                    break
                parent.chmod(parent.stat().st_mode | 0o111)
        self._run(
            "initdb", "-D", str(self.directory / "data"), "-U", self.superuser,
            "--auth=trust", "--encoding=UTF8", "--no-sync",
        )  # fmt: skip
        self.start()

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.directory}"
        self._run(
            "pg_ctl", "-D", str(self.directory / "data"), "-o", options,
            "-l", str(self.directory / "postgres.log"), "-w", "-t", "60", "start",
        )  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        """Stop the server: `fast` ends every session at once, as a restart does."""
        self._run("pg_ctl", "-D", str(self.directory / "data"), "-m", mode, "-w", "stop")

    def answers(self) -> bool:
        import psycopg

        try:
            with psycopg.connect(self.url("postgres"), connect_timeout=2) as connection:
                return connection.execute("SELECT 1").fetchone() == (1,)
        except psycopg.Error:
            return False

    def destroy(self) -> None:
        """Stop it at once and delete its files."""
        data = self.directory / "data"
        if data.exists():
            self._run("pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop", check=False)
            pid_file = data / "postmaster.pid"
            if pid_file.exists():  # pg_ctl failed: do not leave a server behind
                with contextlib.suppress(ValueError, ProcessLookupError):
                    os.kill(int(pid_file.read_text().split()[0]), signal.SIGKILL)
        shutil.rmtree(self.directory, ignore_errors=True)


def _major_version(path: str) -> int:
    return int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0
