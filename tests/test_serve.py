"""`make serve`: the portal's production processes, its static files, and stopping them all.

`manage.py serve` (what `make serve` runs) is started with production settings (DEBUG off,
behind a TLS proxy) against the test database, on a free port, as an operator would.
"""

import gzip
import os
import re
import signal
import time
from pathlib import Path

import brotli
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from tests.serving import API_KEY, SECRET_KEY, alive, portal_served, production_environment
from tests.workers import database_url_for_workers

BASE_DIR = Path(settings.BASE_DIR)
STYLESHEET = re.compile(r'<link rel="stylesheet" href="(/static/css/portal\.[0-9a-f]{12}\.css)"')
ONE_YEAR = 365 * 24 * 60 * 60


def assert_security_headers(reply, what: str) -> None:
    """The headers every page carries in production over https, static files included."""
    headers = reply.headers
    csp = headers["Content-Security-Policy"] or ""
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp, what
    assert "unsafe-inline" not in csp, what
    assert headers["X-Content-Type-Options"] == "nosniff", what
    assert headers["Referrer-Policy"] == "same-origin", what
    assert headers["Cross-Origin-Opener-Policy"] == "same-origin", what
    assert headers["X-Frame-Options"] == "DENY", what
    assert headers["Strict-Transport-Security"].startswith("max-age=63072000"), what


def wait_until_gone(pids, timeout: float = 30) -> list[int]:
    """Wait for processes to end; return the ones still running at the deadline."""
    deadline = time.monotonic() + timeout
    while (left := [pid for pid in pids if alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def max_age(cache_control: str) -> int:
    found = re.search(r"max-age=(\d+)", cache_control)
    return int(found.group(1)) if found else 0


@pytest.mark.django_db(transaction=True)
def test_serve_runs_the_portal_with_its_static_files_and_term_stops_every_process(tmp_path):
    env = production_environment(
        database_url_for_workers(), tmp_path / "static", IMPORT_WORKERS="2"
    )
    with portal_served(env, tmp_path) as portal:
        portal.wait_until_serving()

        # Beside gunicorn (a master and its 2 workers): the delivery worker, IMPORT_WORKERS
        # imports workers and the 5 sweeps.
        processes = portal.descendants()
        commands = sorted(processes.values())
        assert sum("gunicorn" in c for c in commands) == 3, commands
        assert sum(c.endswith("db_worker --no-reload") for c in commands) == 1, commands
        assert sum("db_worker --no-reload --queue-name imports" in c for c in commands) == 2
        for sweep, every in [
            ("sweep_attempts", 60),
            ("sweep_imports", 60),
            ("sweep_alerts", 30),
            ("sweep_retention", 3600),
            ("sweep_housekeeping", 3600),
        ]:
            assert sum(c.endswith(f"{sweep} --every {every}") for c in commands) == 1, commands

        page = portal.get("/accounts/login/")
        assert page.status == 200, portal.output()
        assert_security_headers(page, "sign-in page")
        stylesheet = STYLESHEET.search(page.text())
        assert stylesheet, page.text()
        collected = (tmp_path / "static").joinpath(stylesheet.group(1).removeprefix("/static/"))
        original = collected.read_bytes()

        for encoding, decompress in [("br", brotli.decompress), ("gzip", gzip.decompress)]:
            css = portal.get(stylesheet.group(1), **{"Accept-Encoding": encoding})
            assert css.status == 200, encoding
            assert css.headers["Content-Type"].startswith("text/css")
            assert css.headers["Content-Encoding"] == encoding
            assert decompress(css.body) == original
            assert max_age(css.headers["Cache-Control"]) >= ONE_YEAR
            assert "immutable" in css.headers["Cache-Control"]
            assert_security_headers(css, f"stylesheet ({encoding})")
        plain = portal.get(stylesheet.group(1))
        assert plain.status == 200 and plain.body == original
        assert "Content-Encoding" not in plain.headers

        portal.process.send_signal(signal.SIGTERM)
        assert portal.process.wait(timeout=90) == 0, portal.output()
        assert wait_until_gone(processes) == [], portal.output()
        output = portal.output(last=100_000)
        assert "Stopping the web server, the workers and the sweeps." in output
        assert SECRET_KEY not in output and API_KEY not in output


@pytest.mark.django_db(transaction=True)
def test_when_one_process_dies_serve_stops_the_others_and_exits_non_zero(tmp_path):
    env = production_environment(database_url_for_workers(), tmp_path / "static")
    with portal_served(env, tmp_path) as portal:
        portal.wait_until_serving()
        processes = portal.descendants()
        sweep = next(pid for pid, c in processes.items() if "sweep_alerts" in c)

        os.kill(sweep, signal.SIGKILL)

        assert portal.process.wait(timeout=90) != 0, portal.output()
        assert wait_until_gone(processes) == [], portal.output()
        assert "sweep_alerts stopped by itself" in portal.output()


# ---- .env.example --------------------------------------------------------------------------

# env("NAME"...), env.int("NAME"...) in settings; os.environ.get("NAME") and env.get("NAME")
# in the gunicorn config and the launcher.
READS = re.compile(r"""\benv(?:iron)?(?:\.\w+)?\(\s*['"]([A-Z][A-Z0-9_]*)['"]""")
READERS = ["portal/settings.py", "ops/gunicorn.conf.py", "ops/management/commands/serve.py"]


def test_env_example_lists_every_variable_the_portal_reads_and_no_other():
    read = {name for path in READERS for name in READS.findall((BASE_DIR / path).read_text())}
    listed = set(
        re.findall(r"^#? ?([A-Z][A-Z0-9_]*)=", (BASE_DIR / ".env.example").read_text(), re.M)
    )
    assert {"DEBUG", "SECRET_KEY", "PARTNER_API_BASE_URL", "PORT", "BACKUP_DIR"} <= read
    assert read - listed == set(), "add these to .env.example"
    assert listed - read == set(), "nothing reads these: remove them from .env.example"


@pytest.mark.parametrize(
    ("debug", "secret_key", "refusal"),
    [
        (True, "x" * 60 + "-a-long-and-varied-key-0123456789", "set DEBUG=false"),
        (False, "change-me", "SECRET_KEY is too short or too simple"),
    ],
)
def test_serve_refuses_development_mode_and_a_placeholder_secret_key(
    settings, debug, secret_key, refusal
):
    settings.DEBUG = debug
    settings.SECRET_KEY = secret_key

    with pytest.raises(CommandError, match=refusal):
        call_command("serve", "--no-workers", "--no-sweeps", "--no-migrate")
