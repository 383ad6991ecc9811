"""PostgreSQL backups: a dump with pg_dump, restored with pg_restore into an empty database."""

import os
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql


class BackupError(Exception):
    """A backup or restore that cannot go ahead; the message says why and what to do."""


def require_postgresql(db: dict[str, Any]) -> None:
    """Refuse any database but PostgreSQL, saying what to do instead."""
    if db["ENGINE"] != "django.db.backends.postgresql":
        raise BackupError(
            "make backup and make restore work with PostgreSQL only; DATABASE_URL is "
            f"{db['ENGINE'].rsplit('.', 1)[-1]}. For SQLite, stop the portal and copy "
            "its database file (or run: sqlite3 db.sqlite3 '.backup copy.sqlite3')."
        )


def libpq_environment(db: dict[str, Any]) -> dict[str, str]:
    """Return the environment pg_dump and pg_restore connect with (the password never in argv)."""
    env = dict(os.environ)
    for name, value in (
        ("PGHOST", db.get("HOST")),
        ("PGPORT", db.get("PORT")),
        ("PGUSER", db.get("USER")),
        ("PGPASSWORD", db.get("PASSWORD")),
    ):
        if value:
            env[name] = str(value)
    return env


def client_program(name: str) -> str:
    """Return the path of a PostgreSQL client program, or say which package provides it."""
    found = shutil.which(name)
    if found is None:
        raise BackupError(f"{name} is not installed (Debian: apt-get install postgresql-client).")
    return found


def connect(db: dict[str, Any], name: str | None = None) -> psycopg.Connection:
    """Connect to database `name` (default: the portal's) on the portal's server."""
    return psycopg.connect(
        dbname=name or db["NAME"],
        host=db.get("HOST") or None,
        port=db.get("PORT") or None,
        user=db.get("USER") or None,
        password=db.get("PASSWORD") or None,
        autocommit=True,
    )


def backup(db: dict[str, Any], directory: Path) -> Path:
    """Dump the database (pg_dump's custom format) into `directory`; return the file."""
    require_postgresql(db)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = directory / f"portal-{db['NAME']}-{stamp}.dump"
    partial = target.with_name(target.name + ".partial")
    # Learners' personal data: readable by the owner only, and never half-written under the
    # final name.
    partial.touch(mode=0o600)
    result = subprocess.run(  # noqa: S603 (fixed program, no shell)
        [client_program("pg_dump"), "--format=custom", "--no-owner", f"--file={partial}"]
        + [f"--dbname={db['NAME']}"],
        env=libpq_environment(db),
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        partial.unlink(missing_ok=True)
        raise BackupError(f"pg_dump failed: {result.stderr.strip()}")
    partial.rename(target)
    return target


def table_count(db: dict[str, Any]) -> int:
    """Return how many tables the portal's database holds outside PostgreSQL's own schemas."""
    with connect(db) as connection:
        row = connection.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema NOT IN "
            "('pg_catalog', 'information_schema')"
        ).fetchone()
    return int(row[0])


def ensure_database(db: dict[str, Any]) -> bool:
    """Create the portal's database if it does not exist; return whether it was created."""
    with connect(db, "postgres") as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [db["NAME"]]
        ).fetchone()
        if exists:
            return False
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db["NAME"])))
    return True


def restore(db: dict[str, Any], dump: Path) -> None:
    """Load a dump into the portal's database, which must be empty (it is made if missing)."""
    require_postgresql(db)
    if not dump.is_file():
        raise BackupError(f"No backup file at {dump}.")
    ensure_database(db)
    tables = table_count(db)
    if tables:
        raise BackupError(
            f"The database {db['NAME']} already holds {tables} tables: a backup is restored "
            "only into an empty database. Point DATABASE_URL at a new database name (it is "
            "created), or drop this one first if you mean to replace it."
        )
    result = subprocess.run(  # noqa: S603 (fixed program, no shell)
        [client_program("pg_restore"), "--no-owner", "--exit-on-error", "--single-transaction"]
        + [f"--dbname={db['NAME']}", str(dump)],
        env=libpq_environment(db),
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise BackupError(f"pg_restore failed: {result.stderr.strip()}")
