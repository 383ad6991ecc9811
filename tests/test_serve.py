"""`make serve`: the portal's production processes, its static files, and stopping them all.

`manage.py serve` (what `make serve` runs) is started with production settings (DEBUG off,
behind a TLS proxy) against the test database, on a free port, as an operator would.
"""

import gzip
import json
import os
import re
import signal
import subprocess
import sys
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
        # imports workers, the media worker and the 6 sweeps.
        processes = portal.descendants()
        commands = sorted(processes.values())
        assert sum("gunicorn" in c for c in commands) == 3, commands
        assert sum(c.endswith("db_worker --no-reload") for c in commands) == 1, commands
        assert sum("db_worker --no-reload --queue-name imports" in c for c in commands) == 2
        assert sum(c.endswith("db_worker --no-reload --queue-name media") for c in commands) == 1
        for sweep, every in [
            ("sweep_attempts", 60),
            ("sweep_imports", 60),
            ("sweep_alerts", 30),
            ("sweep_retention", 3600),
            ("sweep_housekeeping", 3600),
            ("sweep_roster", 30),
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
def test_serve_starts_a_process_that_died_again_and_gives_up_when_they_keep_dying(tmp_path):
    env = production_environment(database_url_for_workers(), tmp_path / "static")
    with portal_served(env, tmp_path, "--restart-limit", "2") as portal:
        portal.wait_until_serving()
        processes = portal.descendants()
        sweep = next(pid for pid, c in processes.items() if "sweep_alerts" in c)
        others = [pid for pid in processes if pid != sweep]

        os.kill(sweep, signal.SIGKILL)

        again = wait_for_process(portal, "sweep_alerts", other_than=sweep)
        output = portal.output()
        assert "sweep_alerts stopped by itself (killed by SIGKILL); starting it again in 1 s" in (
            output
        )
        assert "sweep_alerts started again." in output
        assert portal.process.poll() is None and all(alive(pid) for pid in others), output
        assert portal.get("/accounts/login/").status == 200

        os.kill(again, signal.SIGKILL)  # the second death within the window: too many

        assert portal.process.wait(timeout=90) != 0, portal.output()
        assert wait_until_gone([*processes, again]) == [], portal.output()
        output = portal.output()
        assert "2 processes have stopped by themselves within 5 minutes" in output
        assert "Stopping the web server, the workers and the sweeps." in output


def wait_for_process(portal, command: str, *, other_than: int, timeout: float = 60) -> int:
    """Wait for a process below `serve` running `command`, not the given one; return its pid."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [
            pid
            for pid, line in portal.descendants().items()
            if command in line and pid != other_than and alive(pid)
        ]
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"no new {command} within {timeout:g} s\n{portal.output()}")


# ---- The launcher on its own, with tiny processes ------------------------------------------

LAUNCHER = """
import json, os, sys
from pathlib import Path
from ops.launcher import Child, Launcher
children, options = json.loads(sys.argv[1])
launcher = Launcher(
    [Child(name, [sys.executable, "-c", code, path]) for name, (code, path) in children.items()],
    cwd=Path.cwd(), env=dict(os.environ), say=lambda line: print(line, flush=True), **options,
)
sys.exit(launcher.run())
"""
# Each child notes its pid in its file when it starts.
STEADY = "import os, sys, time; open(sys.argv[1], 'a').write(f'{os.getpid()}\\n'); time.sleep(120)"
FAILS_ONCE = (
    "import os, sys, time; first = not os.path.exists(sys.argv[1]); "
    "open(sys.argv[1], 'a').write(f'{os.getpid()}\\n'); sys.exit(3) if first else time.sleep(120)"
)
ALWAYS_FAILS = "import os, sys; open(sys.argv[1], 'a').write(f'{os.getpid()}\\n'); sys.exit(1)"


def launched(tmp_path: Path, children: dict[str, str], **options) -> subprocess.Popen:
    """Start a launcher of the given children (name: code) in a process; its output piped."""
    spec = {name: (code, str(tmp_path / f"{name}.pids")) for name, code in children.items()}
    return subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, json.dumps([spec, options])],
        cwd=BASE_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def pids(tmp_path: Path, name: str) -> list[int]:
    path = tmp_path / f"{name}.pids"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def test_the_launcher_starts_a_dead_process_again_and_leaves_the_others_running(tmp_path):
    launcher = launched(tmp_path, {"steady": STEADY, "fragile": FAILS_ONCE}, restart_pause=0.1)
    deadline = time.monotonic() + 60
    while (
        len(pids(tmp_path, "fragile")) < 2 or not pids(tmp_path, "steady")
    ) and time.monotonic() < deadline:
        time.sleep(0.05)
    (steady,) = pids(tmp_path, "steady")
    first, second = pids(tmp_path, "fragile")
    assert alive(steady) and alive(second) and not alive(first)

    launcher.send_signal(signal.SIGTERM)

    output, _ = launcher.communicate(timeout=60)
    assert launcher.returncode == 0, output
    assert "fragile stopped by itself (exit status 3); starting it again in 0.1 s." in output
    assert "fragile started again." in output
    assert "Stopping the web server, the workers and the sweeps." in output
    assert wait_until_gone([steady, second]) == [], output


def test_the_launcher_gives_up_and_stops_everything_when_processes_keep_dying(tmp_path):
    launcher = launched(
        tmp_path,
        {"steady": STEADY, "broken": ALWAYS_FAILS},
        restart_limit=3,
        restart_window=60,
        restart_pause=0.05,
    )

    output, _ = launcher.communicate(timeout=60)

    assert launcher.returncode == 1, output
    assert len(pids(tmp_path, "broken")) == 3  # started twice again, then given up
    assert "broken stopped by itself (exit status 1); starting it again in 0.05 s." in output
    assert "broken stopped by itself (exit status 1); starting it again in 0.1 s." in output
    assert (
        "broken stopped by itself (exit status 1). 3 processes have stopped by themselves "
        "within 60 seconds: restarting them does not help" in output
    )
    assert output.rstrip().endswith("Stopping the web server, the workers and the sweeps.")
    assert wait_until_gone(pids(tmp_path, "steady")) == [], output


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
