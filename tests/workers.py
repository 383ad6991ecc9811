"""Run a real `db_worker` process against the test database, as production runs it."""

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import connection


def database_url_for_workers() -> str:
    """Return a DATABASE_URL for the test database, for a second process."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    host = db["HOST"] or "127.0.0.1"
    return f"postgres://{db['USER']}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


def worker_environment(upstream_base_url: str, **extra: str) -> dict[str, str]:
    """Return the environment of a worker process: this one's, pointed at the test database."""
    return {
        **os.environ,
        "DATABASE_URL": database_url_for_workers(),
        "PARTNER_API_BASE_URL": upstream_base_url,
        "PARTNER_API_KEY": settings.PARTNER_API_KEY,
        **extra,
    }


def run_db_worker(
    upstream_base_url: str, *, queue: str = "default", timeout: float = 60
) -> subprocess.CompletedProcess:
    """Run `db_worker --batch` on one queue until it is empty; return the finished process."""
    return subprocess.run(
        [sys.executable, "manage.py", "db_worker", "--batch", "--no-startup-delay"]
        + ["--queue-name", queue],
        cwd=settings.BASE_DIR,
        env=worker_environment(upstream_base_url),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@dataclass
class RunningWorker:
    """A `db_worker` process left running in the background, and where its output goes."""

    process: subprocess.Popen
    log_path: Path

    def output(self, last: int = 3000) -> str:
        """Return the end of what the worker printed so far (for assertion messages)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        exit_code = self.process.poll()
        status = "running" if exit_code is None else f"exited with {exit_code}"
        return f"[db_worker {status}]\n{text[-last:]}"


@contextmanager
def db_worker_running(
    upstream_base_url: str,
    queue: str = "default",
    *,
    interval: float = 0.5,
    env: dict[str, str] | None = None,
) -> Iterator[RunningWorker]:
    """Run `db_worker` on one queue in the background until the block ends.

    The worker polls every `interval` seconds; `env` adds settings for it (they are read from
    the environment, so the test's `settings` fixture does not reach it). At the end it is
    asked to stop (SIGTERM: it finishes the task in hand) and waited for, killed if it hangs.
    """
    with tempfile.NamedTemporaryFile(
        "wb", prefix=f"db-worker-{queue}-", suffix=".log", delete=False
    ) as log:
        log_path = Path(log.name)
        process = subprocess.Popen(
            [sys.executable, "manage.py", "db_worker", "--no-startup-delay", "--no-reload"]
            + ["--interval", str(interval), "--queue-name", queue],
            cwd=settings.BASE_DIR,
            env=worker_environment(upstream_base_url, **(env or {})),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        yield RunningWorker(process, log_path)
    finally:
        stop_process(process)
        log_path.unlink(missing_ok=True)


def stop_process(process: subprocess.Popen) -> None:
    """Ask a process to stop (TERM: it finishes what it has in hand), killing it if it hangs."""
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
