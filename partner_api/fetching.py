"""Fetching a small file for the portal itself (an answer picture, partner_api.pictures).

No key unless asked, no cookies, no proxy or ~/.netrc from the environment, no redirects, a size
cap, and one deadline for the whole fetch: from before the name is looked up to the last byte of
the body, so a slow host (or a slow name server) cannot hold a worker past it. When asked, no
connection to an address off the public internet. Besides the transport, the only module that
imports requests.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Mapping
from http.cookiejar import DefaultCookiePolicy

import requests
from django.views.decorators.debug import sensitive_variables
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, HTTPError, NewConnectionError, ReadTimeoutError
from urllib3.util.connection import create_connection

from kit.addresses import is_public_ip
from partner_api.transport import USER_AGENT

TOO_LATE = "it did not answer in time"


class FetchRefused(Exception):
    """A file the portal fetched for itself was not had; the message says why, with no address.

    `final`: trying again cannot help (the address is refused, the answer is not a file the
    portal keeps); otherwise the failure may pass (a timeout, a 5xx, a dropped connection).
    """

    def __init__(self, reason: str, *, final: bool = False) -> None:
        super().__init__(reason)
        self.final = final


def not_public() -> FetchRefused:
    """Return the refusal of a host off the public internet."""
    return FetchRefused("its host is not on the public internet", final=True)


def resolve(host: str, port: int, *, timeout: float) -> list[str]:
    """Return every IP address a host name resolves to (none if it does not), within `timeout`.

    getaddrinfo takes no timeout, and a name server may take its time: it is asked from a
    thread of its own, left behind (it ends with the resolver's own timeout) if it is late.
    """
    found: list[str] = []

    def look_up() -> None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            return
        found.extend(str(info[4][0]) for info in infos)

    thread = threading.Thread(target=look_up, name="fetch-resolve", daemon=True)
    thread.start()
    thread.join(max(timeout, 0))
    if thread.is_alive():
        raise FetchRefused(TOO_LATE)
    return list(found)


@sensitive_variables()
def fetch_small_file(
    url: str,
    *,
    headers: Mapping[str, str],
    timeout: tuple[float, float],
    max_bytes: int,
    public_only: bool,
) -> bytes:
    """GET one file whole, at most `max_bytes`, following no redirect; else FetchRefused.

    All of it within sum(timeout) seconds. With `public_only`, a connection that would reach an
    address off the public internet is never made.
    """
    deadline = _Deadline(time.monotonic() + sum(timeout))
    session = requests.Session()
    # No proxy from the environment and no ~/.netrc credentials: only `headers` go out.
    session.trust_env = False
    session.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))
    adapter = _GuardedAdapter(deadline, public_only=public_only)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    sent = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity", **headers}
    deadline.start()
    try:
        with session.get(
            url, headers=sent, timeout=timeout, allow_redirects=False, stream=True
        ) as response:
            return _small_body(response, max_bytes, deadline=deadline)
    except requests.RequestException as exc:
        raise FetchRefused(TOO_LATE if deadline.expired else _fetch_failure(exc)) from None
    except FetchRefused:
        if deadline.expired:
            raise FetchRefused(TOO_LATE) from None
        raise
    finally:
        deadline.stop()
        session.close()


class _Deadline:
    """The moment a fetch is given up: then a watchdog shuts its sockets, however it waits."""

    def __init__(self, at: float) -> None:
        self.at = at
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def left(self) -> float:
        """Return the seconds left (never below zero)."""
        return max(self.at - time.monotonic(), 0.0)

    def start(self) -> None:
        """Start the watchdog."""
        self._timer = threading.Timer(self.left(), self._expire)
        self._timer.daemon = True
        self._timer.start()

    def stop(self) -> None:
        """Stop the watchdog (the fetch is over)."""
        if self._timer is not None:
            self._timer.cancel()

    def watch(self, sock: socket.socket) -> None:
        """Shut this socket at the deadline (at once if it has passed)."""
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def _expire(self) -> None:
        # Shutting a socket wakes a recv blocked on it (closing it would not): the request
        # fails at once, whether it waits for headers, body bytes or a TLS handshake.
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed
        sock.shutdown(socket.SHUT_RDWR)


def _small_body(response: requests.Response, max_bytes: int, *, deadline: _Deadline) -> bytes:
    """Read a 200's body, stopping as soon as it passes `max_bytes` or the deadline."""
    status = response.status_code
    if 300 <= status < 400:
        raise FetchRefused("it answered with a redirect, which is not followed", final=True)
    if status != 200:
        raise FetchRefused(f"it answered with status {status}")
    too_big = f"it is larger than {max_bytes // 1024} KB"
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise FetchRefused(too_big, final=True)
    body = bytearray()
    # read1: whatever has arrived, so the deadline is checked however slowly bytes come.
    while chunk := _read_some(response):
        body += chunk
        if len(body) > max_bytes:
            raise FetchRefused(too_big, final=True)
        if deadline.left() <= 0:
            raise FetchRefused(TOO_LATE)
    if deadline.expired:  # the watchdog shut the socket: the body ended early, not whole
        raise FetchRefused(TOO_LATE)
    return bytes(body)


def _read_some(response: requests.Response) -> bytes:
    """Return the next bytes of a streamed body as they arrive (decoded), b"" at its end."""
    try:
        return response.raw.read1(16384, decode_content=True)
    except ReadTimeoutError:
        raise FetchRefused(TOO_LATE) from None
    except (HTTPError, OSError):
        raise FetchRefused("the connection dropped while reading it") from None


def _fetch_failure(exc: requests.RequestException) -> str:
    """Say why a fetch failed, by the exception's type (its text holds the address)."""
    if isinstance(exc, requests.Timeout):
        return TOO_LATE
    if isinstance(exc, requests.exceptions.SSLError):
        return "its TLS certificate was not accepted"
    if isinstance(exc, requests.ConnectionError):
        return "it could not be reached"
    return f"the request failed ({type(exc).__name__})"


class _Guarded:
    """A connection that looks its host up within the deadline, refuses non-public addresses
    (when asked) before connecting, and is shut by the deadline's watchdog."""

    deadline: _Deadline
    public_only: bool

    def _new_conn(self) -> socket.socket:
        host, port = self._dns_host, self.port  # type: ignore[attr-defined]
        addresses = resolve(host, port, timeout=self.deadline.left())
        if not addresses:
            raise NewConnectionError(self, "the name did not resolve")  # type: ignore[arg-type]
        # Every address, as the caller's own check: a name may resolve elsewhere now (DNS
        # rebinding), and the connection tries each in turn.
        if self.public_only and not all(is_public_ip(address) for address in addresses):
            raise not_public()
        given = self.timeout  # type: ignore[attr-defined]
        failure: OSError | None = None
        for address in addresses:
            left = self.deadline.left()
            if left <= 0:
                raise FetchRefused(TOO_LATE)
            try:
                sock = create_connection(
                    (address, port),
                    min(given, left) if isinstance(given, int | float) else left,
                    source_address=self.source_address,  # type: ignore[attr-defined]
                    socket_options=self.socket_options,  # type: ignore[attr-defined]
                )
            except OSError as exc:  # refused, unreachable, timed out: the next address
                failure = exc
                continue
            self.deadline.watch(sock)
            return sock
        if isinstance(failure, TimeoutError):
            raise ConnectTimeoutError(self, "connecting timed out")
        raise NewConnectionError(self, "could not connect")  # type: ignore[arg-type]


class _GuardedAdapter(HTTPAdapter):
    """requests' adapter, its pools making only guarded connections for one fetch."""

    def __init__(self, deadline: _Deadline, *, public_only: bool) -> None:
        guard = {"deadline": deadline, "public_only": public_only}
        self._classes = {
            "http": type("_Pool", (HTTPConnectionPool,), {
                "ConnectionCls": type("_HTTP", (_Guarded, HTTPConnection), guard),
            }),
            "https": type("_Pool", (HTTPSConnectionPool,), {
                "ConnectionCls": type("_HTTPS", (_Guarded, HTTPSConnection), guard),
            }),
        }  # fmt: skip
        super().__init__()

    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = self._classes
