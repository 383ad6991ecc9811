"""The processes of a scaled-out portal: nginx, two gunicorns, workers, sweeps, the sandbox.

Each process is started in a session of its own, so that one SIGKILL of its process group
takes a gunicorn master with its workers, and Ctrl-C in the terminal reaches only the load
test, which then stops everything itself (TERM, then KILL after a grace period). Logs go to
files in the run's directory, which is printed and kept.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from http.client import HTTPConnection
from pathlib import Path

from bench.support import free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
NGINX = "/usr/sbin/nginx"
GUNICORN_WORKERS = 2
GUNICORN_THREADS = 8
SWEEP_EVERY = 10  # seconds between sweeps (production: every minute)

NGINX_CONF = """\
daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/nginx-error.log warn;
events {{ worker_connections 2048; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    keepalive_timeout 300s;
    upstream portal {{
{servers}
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://portal;
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Request-ID $request_id;
            proxy_connect_timeout 2s;
            proxy_read_timeout 60s;
        }}
    }}
}}
"""


@dataclass
class Cluster:
    """The running processes by name, their ports and the run's directory."""

    env: dict[str, str]
    directory: Path
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)

    def start(self, name: str, command: list[str], port: int | None = None) -> None:
        """Start one process in its own session, logging to <directory>/<name>.log."""
        log = open(self.directory / f"{name}.log", "ab")  # noqa: SIM115 (kept by the child)
        self.processes[name] = subprocess.Popen(  # noqa: S603 (our own command lines)
            command,
            cwd=ROOT,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        if port is not None:
            self.ports[name] = port
            wait_for_port(port, timeout=60)

    def manage(self, name: str, *arguments: str) -> None:
        """Start a manage.py command."""
        self.start(name, [sys.executable, "manage.py", *arguments])

    def gunicorn(self, name: str, port: int | None = None) -> None:
        """Start a gunicorn instance (its own master) serving portal.wsgi with threads."""
        port = port or free_port()
        command = [
            str(Path(sys.executable).parent / "gunicorn"),
            "portal.wsgi:application",
            # The production settings file (no control socket that two instances would share,
            # metrics across workers); the flags below override its size and address.
            "--config=ops/gunicorn.conf.py",
            f"--bind=127.0.0.1:{port}",
            f"--workers={GUNICORN_WORKERS}",
            "--worker-class=gthread",
            f"--threads={GUNICORN_THREADS}",
            "--log-level=warning",
            "--graceful-timeout=5",
        ]
        self.start(name, command, port)

    def nginx(self, backends: list[str]) -> int:
        """Start nginx with its own config in front of the named gunicorns; return its port."""
        port = free_port()
        prefix = self.directory / "nginx"
        prefix.mkdir(exist_ok=True)
        servers = "\n".join(
            f"        server 127.0.0.1:{self.ports[name]} max_fails=1 fail_timeout=5s;"
            for name in backends
        )
        config = prefix / "nginx.conf"
        config.write_text(NGINX_CONF.format(prefix=prefix, servers=servers, port=port))
        self.start("nginx", [NGINX, "-p", str(prefix), "-c", str(config), "-e", "stderr"], port)
        return port

    def kill(self, name: str) -> None:
        """SIGKILL a process and everything in its process group, and reap it."""
        process = self.processes[name]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def stop(self) -> None:
        """Stop every process: TERM to each group, then KILL whatever is left after 10 s."""
        for process in self.processes.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for process in self.processes.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
        for process in self.processes.values():
            # The group may outlive its leader (a gunicorn worker): kill the group either way.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)

    def groups(self, names: tuple[str, ...]) -> set[int]:
        """Return the process groups of the named processes (each leads its own)."""
        return {self.processes[name].pid for name in names if name in self.processes}

    def dead(self) -> list[str]:
        """Return the names of processes that stopped by themselves."""
        return [name for name, process in self.processes.items() if process.poll() is not None]


def nginx_available() -> bool:
    """Return whether Debian's nginx is installed (the Makefile installs it with apt if not)."""
    return Path(NGINX).exists() or shutil.which("nginx") is not None


def wait_until_serving(port: int, path: str = "/accounts/login/", timeout: float = 60) -> None:
    """Wait until a page answers 200 through the port."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            connection = HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", path)
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        finally:
            connection.close()
        time.sleep(0.2)
    raise RuntimeError(f"127.0.0.1:{port}{path} did not answer 200 within {timeout:g} s")
