"""Several real portal processes sharing the machine's Redis and the test database.

Tests marked `redis` start them: they are skipped when Redis does not answer, unless
REQUIRE_REDIS is set (CI), where they fail instead. Each test's keys carry a prefix of its own
in REDIS_TEST_URL's database (db 15 unless set), so xdist workers and parallel runs never
meet; "flushing Redis" deletes that prefix's keys, never a whole database.
"""

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.client import HTTPConnection
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.conf import settings

from tests.workers import database_url_for_workers, stop_process

REDIS_TEST_URL = os.environ.get("REDIS_TEST_URL", "redis://127.0.0.1:6379/15")


def require_redis():
    """Return a client of the test Redis; skip the test if it does not answer (fail in CI)."""
    import redis

    client = redis.Redis.from_url(REDIS_TEST_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        problem = f"Redis does not answer at {REDIS_TEST_URL}: {exc}"
        if os.environ.get("REQUIRE_REDIS"):
            pytest.fail(f"{problem} (REQUIRE_REDIS is set, so Redis tests must run)")
        pytest.skip(problem)
    return client


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(condition, *, timeout: float = 60, what: str = "a condition") -> None:
    """Wait for `condition()` to be true, polling; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"Timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.05)


@dataclass
class SharedRedis:
    """The environment every process of one test shares: the database, Redis and a prefix."""

    client: object
    prefix: str
    upstream_url: str
    extra: dict[str, str] = field(default_factory=dict)

    def environment(self) -> dict[str, str]:
        return {
            **os.environ,
            "DATABASE_URL": database_url_for_workers(),
            "CACHE_URL": REDIS_TEST_URL,
            "CACHE_KEY_PREFIX": self.prefix,
            "PARTNER_API_BASE_URL": self.upstream_url,
            "PARTNER_API_KEY": settings.PARTNER_API_KEY,
            "PORTAL_LOG_LEVEL": "WARNING",
            # Staff sign in with a password alone here (tests marked mfa test the second factor).
            "STAFF_MFA_REQUIRED": "false",
            **self.extra,
        }

    def flush(self) -> int:
        """Delete every key of this test (as a Redis restart would lose them); return how many."""
        keys = list(self.client.scan_iter(match=f"{self.prefix}:*", count=500))
        if keys:
            self.client.delete(*keys)
        return len(keys)

    def run_django(self, code: str, timeout: float = 120) -> str:
        """Run Python `code` in a new Django process (manage.py shell); return what it printed."""
        done = subprocess.run(
            [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
            cwd=settings.BASE_DIR,
            env=self.environment(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    @contextmanager
    def server(self) -> Iterator["PortalServer"]:
        """Run the portal (runserver, no reloader) in its own process until the block ends."""
        port = free_port()
        with tempfile.NamedTemporaryFile(
            "wb", prefix="portal-", suffix=".log", delete=False
        ) as log:
            log_path = Path(log.name)
            process = subprocess.Popen(
                [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
                cwd=settings.BASE_DIR,
                env=self.environment(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        server = PortalServer(port, process, log_path)
        try:
            wait_until(server.answers, timeout=90, what=f"the portal on port {port}")
            yield server
        finally:
            stop_process(process)
            log_path.unlink(missing_ok=True)


@contextmanager
def shared_redis(upstream_url: str, **extra: str) -> Iterator[SharedRedis]:
    """A fresh key prefix in the test Redis for one test, its keys deleted at the end."""
    shared = SharedRedis(require_redis(), f"test-{uuid.uuid4().hex[:12]}", upstream_url, extra)
    try:
        yield shared
    finally:
        shared.flush()


@dataclass
class PortalServer:
    """A running portal process and where its output goes."""

    port: int
    process: subprocess.Popen
    log_path: Path

    def answers(self) -> bool:
        if self.process.poll() is not None:
            pytest.fail(f"The portal process exited:\n{self.output()}")
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:]


@dataclass
class Browser:
    """Cookies kept across requests to any of the processes, as one browser would."""

    cookies: dict[str, str] = field(default_factory=dict)

    def request(self, server: PortalServer, method: str, path: str, form: dict | None = None):
        """Send one request; return (status, body, Location header)."""
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        body = None
        if form is not None:
            body = urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            headers["Referer"] = f"http://127.0.0.1:{server.port}{path}"
        connection = HTTPConnection("127.0.0.1", server.port, timeout=60)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            text = response.read().decode(errors="replace")
        finally:
            connection.close()
        for header in response.msg.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                if morsel.value:
                    self.cookies[name] = morsel.value
                else:
                    self.cookies.pop(name, None)
        return response.status, text, response.getheader("Location", "")

    def sign_in(self, server: PortalServer, username: str, password: str):
        """Post the sign-in form (with its CSRF token) to one process; return the response."""
        _, page, _ = self.request(server, "GET", "/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        form = {"csrfmiddlewaretoken": token, "username": username, "password": password}
        return self.request(server, "POST", "/accounts/login/", form)
