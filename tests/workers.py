"""Run a real `db_worker` process against the test database, as production runs it."""

import os
import subprocess
import sys
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


def run_db_worker(
    upstream_base_url: str, *, queue: str = "default", timeout: float = 60
) -> subprocess.CompletedProcess:
    """Run `db_worker --batch` on one queue until it is empty; return the finished process."""
    return subprocess.run(
        [sys.executable, "manage.py", "db_worker", "--batch", "--no-startup-delay"]
        + ["--queue-name", queue],
        cwd=settings.BASE_DIR,
        env={
            **os.environ,
            "DATABASE_URL": database_url_for_workers(),
            "PARTNER_API_BASE_URL": upstream_base_url,
            "PARTNER_API_KEY": settings.PARTNER_API_KEY,
        },
        capture_output=True,
        text=True,
        timeout=timeout,
    )
