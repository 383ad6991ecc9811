"""Run `manage.py serve` (what `make serve` runs) with production settings, and talk to it."""

import http.client
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

from django.conf import settings

SECRET_KEY = f"serve-test-{secrets.token_urlsafe(40)}"
API_KEY = f"serve-test-api-key-{secrets.token_hex(8)}"


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def production_environment(database_url: str, static_root: Path, **extra: str) -> dict[str, str]:
    """Return a production environment (DEBUG off) for the portal, behind a TLS proxy."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(
            ("SECURE_", "PARTNER_API_", "WEB_", "GUNICORN_", "PROMETHEUS_", "IMPORT_")
        )
    }
    env.update(
        DEBUG="false",
        SECRET_KEY=SECRET_KEY,
        ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=database_url,
        PARTNER_API_KEY=API_KEY,
        # Nothing listens there: the pages these tests read never call the upstream.
        PARTNER_API_BASE_URL="http://127.0.0.1:9/plapi/v1/partners",
        PARTNER_API_ALLOW_HTTP="true",
        SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto,https",
        STATIC_ROOT=str(static_root),
        WEB_CONCURRENCY="2",
        GUNICORN_THREADS="2",
        IMPORT_WORKERS="1",
        PYTHONDONTWRITEBYTECODE="1",
        # Staff sign in with a password alone here; a test of the second factor passes "true".
        STAFF_MFA_REQUIRED="false",
    )
    env.update(extra)
    return env


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def text(self) -> str:
        return self.body.decode(errors="replace")


@dataclass
class ServedPortal:
    """A running `manage.py serve`, and a client that comes in as a TLS proxy would send it."""

    process: subprocess.Popen
    port: int
    log_path: Path
    cookies: dict[str, str] = field(default_factory=dict)

    def output(self, last: int = 4000) -> str:
        """Return the end of what the processes printed (for assertion messages)."""
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        status = self.process.poll()
        return f"[serve {'running' if status is None else f'exited {status}'}]\n{text[-last:]}"

    def request(
        self, method: str, path: str, *, headers: dict[str, str] | None = None, form=None
    ) -> Reply:
        """Send one request (as https through a proxy), keeping cookies like a browser."""
        sent = {"X-Forwarded-Proto": "https", "Host": f"127.0.0.1:{self.port}"}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if form is not None:
            body = urlencode(form)
            sent["Content-Type"] = "application/x-www-form-urlencoded"
            sent["Origin"] = f"https://127.0.0.1:{self.port}"
        sent.update(headers or {})
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request(method, path, body=body, headers=sent)
            response = connection.getresponse()
            reply = Reply(response.status, response.headers, response.read())
        finally:
            connection.close()
        for header in reply.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        return reply

    def get(self, path: str, **headers: str) -> Reply:
        return self.request("GET", path, headers=headers)

    def wait_until_serving(self, timeout: float = 240) -> None:
        """Wait until the sign-in page answers (collectstatic, migrate and gunicorn first)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.output()
            try:
                if self.get("/accounts/login/").status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"the portal did not answer within {timeout} s\n{self.output()}")

    def descendants(self) -> dict[int, str]:
        """Return every process below `serve` (pid to command line), grandchildren too."""
        parents: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
        found, frontier = {}, [self.process.pid]
        while frontier:
            parent = frontier.pop()
            for pid, ppid in parents.items():
                if ppid == parent and pid not in found:
                    found[pid] = command_line(pid)
                    frontier.append(pid)
        return found


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def alive(pid: int) -> bool:
    """Whether a process still runs (a zombie waiting to be reaped counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@contextmanager
def portal_served(env: dict[str, str], log_dir: Path, *args: str) -> Iterator[ServedPortal]:
    """Run `manage.py serve` on a free port until the block ends (TERM, then KILL if stuck)."""
    port = free_port()
    log_path = log_dir / "serve.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(port), *args],
            cwd=settings.BASE_DIR,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    served = ServedPortal(process, port, log_path)
    try:
        yield served
    finally:
        if process.poll() is None:
            left = served.descendants()
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=90)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                for pid in left:
                    if alive(pid):
                        os.kill(pid, signal.SIGKILL)
