"""A strict stand-in for the Learner Assessment Partner API, served over real HTTP.

It implements the spec with the assumptions of docs/partner-api.md and keeps its own state in
memory, optionally saved to a JSON file after every change so that a restart (of `make run`, say)
still knows the learners the portal registered. It never imports the portal's apps: it is an
independent implementation of the spec. Faults (sandbox.faults) can be injected per endpoint,
from Python, the command line or the control API at /_sandbox/faults.

This module owns the serving: the request handler and its access log, the threaded server whose
closing never waits for a hanging request, and starting one (start_sandbox, in a background
thread, for tests and tools; make_sandbox_server for the `sandbox` command). The application is
sandbox.app, the world sandbox.state, the endpoints sandbox.endpoints.
"""

from __future__ import annotations

import os
import socketserver
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from sandbox.app import _HANDLER_KEY, _SOCKET_KEY, API_PREFIX, DEMO_API_KEY, SandboxApp
from sandbox.state import SandboxState

__all__ = [
    "DEMO_API_KEY",
    "RunningSandbox",
    "SandboxServer",
    "base_url_of",
    "make_sandbox_server",
    "start_sandbox",
]


class SandboxRequestHandler(WSGIRequestHandler):
    """A request handler that prints one access line (method, path, status) or nothing."""

    quiet = False

    def get_environ(self) -> dict[str, Any]:
        """Return the WSGI environ, with the socket and handler a dropped connection needs."""
        environ = super().get_environ()
        environ[_SOCKET_KEY] = self.connection
        environ[_HANDLER_KEY] = self
        return environ

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Print the method, the path without its query string and the status."""
        if not self.quiet:
            path = self.path.split("?", 1)[0]
            sys.stderr.write(f"{self.command} {path} {code}\n")

    def log_message(self, format: str, *args: Any) -> None:
        """Print server messages unless quiet (never headers, so never the key)."""
        if not self.quiet:
            sys.stderr.write(f"sandbox: {format % args}\n")


class _QuietRequestHandler(SandboxRequestHandler):
    quiet = True


class SandboxServer(socketserver.ThreadingMixIn, WSGIServer):
    """A WSGI server with one daemon thread per request, so concurrent calls work.

    Closing it never waits for requests in flight: a request left hanging by a fault would
    otherwise hold up the shutdown. Such requests are woken and end without an answer.
    """

    daemon_threads = True
    block_on_close = False

    def server_close(self) -> None:
        """Wake any request that hangs or waits, then release the port."""
        app = self.get_app()
        if isinstance(app, SandboxApp):
            app.stopping.set()
        super().server_close()


def make_sandbox_server(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    api_key: str = DEMO_API_KEY,
    state: SandboxState | None = None,
    quiet: bool = False,
) -> SandboxServer:
    """Create (bind but do not start) a sandbox server; port 0 picks a free port."""
    app = SandboxApp(state or SandboxState(), api_key)
    handler = _QuietRequestHandler if quiet else SandboxRequestHandler
    return make_server(host, port, app, server_class=SandboxServer, handler_class=handler)


def base_url_of(server: SandboxServer) -> str:
    """Return the base URL of a bound server, API prefix included."""
    host, port = server.server_address[:2]
    return f"http://{host}:{port}{API_PREFIX}"


@dataclass
class RunningSandbox:
    """A sandbox serving in a background thread; stop it, or use it as a context manager."""

    server: SandboxServer
    thread: threading.Thread
    state: SandboxState

    @property
    def host(self) -> str:
        """Return the host the server is bound to."""
        return str(self.server.server_address[0])

    @property
    def port(self) -> int:
        """Return the port the server is bound to."""
        return int(self.server.server_address[1])

    @property
    def base_url(self) -> str:
        """Return the base URL, including the /plapi/v1/partners prefix."""
        return base_url_of(self.server)

    def stop(self) -> None:
        """Stop serving and release the port, without waiting for requests in flight."""
        app = self.server.get_app()
        if isinstance(app, SandboxApp):
            app.stopping.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)

    def __enter__(self) -> RunningSandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_sandbox(
    host: str = "127.0.0.1",
    port: int = 0,
    api_key: str = DEMO_API_KEY,
    assessments_per_learner: int = 3,
    *,
    quiet: bool = True,
    state_file: str | os.PathLike[str] | None = None,
    faults: Iterable[str] = (),
    seed: int | None = None,
) -> RunningSandbox:
    """Start a sandbox in a daemon thread and return it once it accepts connections.

    The state lives in memory only, unless `state_file` names a file to load it from (if it
    exists) and to save it to after every change. `faults` are rules in the compact form of
    sandbox.faults (`view-assessment=503:times=2`), drawn from `seed`.
    """
    state = SandboxState(
        assessments_per_learner=assessments_per_learner, state_file=state_file, fault_seed=seed
    )
    for spec in faults:
        state.faults.add_spec(spec)
    warning = state.load()
    if warning:
        sys.stderr.write(f"sandbox: {warning}\n")
    server = make_sandbox_server(host, port, api_key=api_key, state=state, quiet=quiet)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    # The socket is already listening after bind, so requests queue until the loop runs.
    return RunningSandbox(server, thread, state)
