"""`make bench`: measure the portal at scale on PostgreSQL and print one table against targets.

    python -m bench.run [--only pages,lists] [--rounds 3] [--seconds 4] [--roster-pupils 1000]

Parts: lists, export, import, pages, sign-in, trust, roster (all by default).

Everything runs against BENCH_DATABASE_URL (default postgres://root@127.0.0.1:5432/portal_bench),
created if missing and migrated, with DEBUG off, and the cache (cached_db sessions, the signed-in
user) in Redis at BENCH_CACHE_URL (default redis://127.0.0.1:6379/1), as production runs. The
100,000 learners / 300,000 attempts are generated once (demo.generator) and reused while they
are there. A sandbox upstream
with 50 ms of latency on create-learner serves the bulk-registration part. The trust of 50
schools (bench.trust) has a database of its own, BENCH_TRUST_DATABASE_URL (default
postgres://root@127.0.0.1:5432/portal_bench_trust), and so has the roster's (bench.roster),
BENCH_ROSTER_DATABASE_URL (default postgres://root@127.0.0.1:5432/portal_bench_roster).
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE_URL = "postgres://root@127.0.0.1:5432/portal_bench"
DEFAULT_TRUST_DATABASE_URL = "postgres://root@127.0.0.1:5432/portal_bench_trust"
DEFAULT_ROSTER_DATABASE_URL = "postgres://root@127.0.0.1:5432/portal_bench_roster"
DEFAULT_CACHE_URL = "redis://127.0.0.1:6379/1"
COHORT_LEARNERS = 100_000
COHORT_ATTEMPTS = 300_000
COHORT_SEED = 5
CREATE_LATENCY_MS = 50
PARTS = ("lists", "export", "import", "pages", "sign-in", "trust", "roster")


def bench_environment(database_url: str) -> dict[str, str]:
    """Return the environment every bench process runs with: production-like, DEBUG off."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "bench.settings",
        "DATABASE_URL": database_url,
        "DEBUG": "false",
        "SECRET_KEY": os.environ.get("SECRET_KEY", "bench-only-secret-key-not-for-production-use"),
        "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
        "PARTNER_API_KEY": os.environ.get("PARTNER_API_KEY", "sandbox-demo-key"),
        "PARTNER_API_ALLOW_HTTP": "true",
        "SECURE_SSL_REDIRECT": "false",
        "PORTAL_LOG_LEVEL": "WARNING",
        # The bench's staff sign in with a password alone (or force_login): no second factor.
        "STAFF_MFA_REQUIRED": "false",
        # Production's shared state: the cache (and cached_db sessions) in Redis.
        "CACHE_URL": os.environ.get("BENCH_CACHE_URL", DEFAULT_CACHE_URL),
        "CACHE_KEY_PREFIX": "bench",
    }


def ensure_database(database_url: str) -> None:
    """Create the bench database if it does not exist yet."""
    import psycopg

    parts = urlsplit(database_url)
    name = parts.path.lstrip("/")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [name]
        ).fetchone()
        if not exists:
            print(f"Creating database {name}")
            connection.execute(f'CREATE DATABASE "{name}"')


def start_sandbox(env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """Start the sandbox with 50 ms latency on create-learner; return it and its base URL."""
    from bench.support import free_port, wait_for_port

    port = free_port()
    process = subprocess.Popen(  # noqa: S603 (our own command line)
        [
            sys.executable,
            "manage.py",
            "sandbox",
            "--host=127.0.0.1",
            f"--port={port}",
            "--no-persist",
            "--seed=1",
            f"--fault=create-learner=latency:ms={CREATE_LATENCY_MS}",
            "--verbosity=0",
        ],
        cwd=ROOT,
        env=env,
        # Its request log would bury the table.
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_port(port, timeout=30)
    return process, f"http://127.0.0.1:{port}/plapi/v1/partners"


def ensure_cohort() -> str:
    """Generate the 100k/300k data set unless it is already there; say which."""
    from assessments.models import AssessmentAttempt
    from learners.models import Learner

    learners = Learner.objects.count()
    attempts = AssessmentAttempt.objects.count()
    if learners >= COHORT_LEARNERS and attempts >= COHORT_ATTEMPTS:
        return f"reused ({learners:,} learners, {attempts:,} attempts)"
    try:
        from demo.generator import cohort_clear, generate_cohort
    except ImportError:
        return f"MISSING: demo.generator not available ({learners:,} learners)"
    started = time.monotonic()
    if learners:
        print(f"Too small a data set ({learners:,} learners): clearing the generated part")
        cohort_clear(stdout=sys.stdout)
    print(f"Generating {COHORT_LEARNERS:,} learners and {COHORT_ATTEMPTS:,} attempts", flush=True)
    generate_cohort(
        learners=COHORT_LEARNERS, attempts=COHORT_ATTEMPTS, seed=COHORT_SEED, stdout=sys.stdout
    )
    return f"generated in {time.monotonic() - started:.0f} s"


def print_table(rows: list[tuple[str, str, str, str]]) -> None:
    """Print the rows (measure, measured, target, verdict) as one aligned table."""
    header = ("measure", "measured", "target", "result")
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(4)]
    line = "  ".join("-" * width for width in widths)
    print()
    print("  ".join(text.ljust(width) for text, width in zip(header, widths, strict=True)))
    print(line)
    for row in rows:
        print("  ".join(str(t).ljust(w) for t, w in zip(row, widths, strict=True)))
    print(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(PARTS), help="comma-separated parts")
    parser.add_argument("--rounds", type=int, default=5, help="load rounds per page")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per URL a round")
    parser.add_argument("--requests", type=int, default=50, help="requests per list measure")
    parser.add_argument("--import-rows", type=int, default=1000, help="rows to register")
    parser.add_argument("--roster-pupils", type=int, default=1000, help="new pupils to sync")
    args = parser.parse_args()
    parts = [part for part in args.only.split(",") if part]

    database_url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DATABASE_URL)
    env = bench_environment(database_url)
    ensure_database(database_url)
    sandbox, base_url = start_sandbox(env)
    env["PARTNER_API_BASE_URL"] = base_url
    os.environ.update(env)
    try:
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        # DEBUG off: pages name hashed static files, as in production (`manage.py serve`).
        call_command("collectstatic", interactive=False, verbosity=0)
        cohort = ensure_cohort() if {"lists", "export"} & set(parts) else "not needed"
        print(f"Data set: {cohort}", flush=True)
        rows: list[tuple[str, str, str, str]] = []
        if "lists" in parts:
            from bench import lists

            rows += lists.rows(requests=args.requests)
        if "export" in parts:
            from bench import export

            rows += export.rows()
        if "import" in parts:
            from bench import bulk

            rows += bulk.rows(latency_ms=CREATE_LATENCY_MS, count=args.import_rows)
        if "pages" in parts:
            from bench import pages

            rows += pages.rows(env, rounds=args.rounds, seconds=args.seconds)
        if "sign-in" in parts:
            from bench import sign_in

            rows += sign_in.rows(env)
        if "trust" in parts:
            from bench import trust

            trust_url = os.environ.get("BENCH_TRUST_DATABASE_URL", DEFAULT_TRUST_DATABASE_URL)
            rows += trust.rows(env, database_url=trust_url, requests=args.requests)
        if "roster" in parts:
            from bench import roster

            roster_url = os.environ.get("BENCH_ROSTER_DATABASE_URL", DEFAULT_ROSTER_DATABASE_URL)
            rows += roster.rows(
                env,
                database_url=roster_url,
                pupils=args.roster_pupils,
                latency_ms=CREATE_LATENCY_MS,
            )
    finally:
        sandbox.terminate()
        sandbox.wait(timeout=30)
    print_table(rows)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(
        f"Database: {urlsplit(database_url).path.lstrip('/')} (PostgreSQL); DEBUG off;"
        f" data set {cohort}; {os.cpu_count()} CPUs, load average now {load}"
    )
    return 0 if all(row[3] != "FAIL" for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
