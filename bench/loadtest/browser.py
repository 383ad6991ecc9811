"""A small browser for simulated people: asyncio keep-alive HTTP/1.1, cookies, redirects, timing.

Every person runs as a coroutine in one event loop (bench/loadtest/journeys.py), so 1,500
learners cost one thread and a socket each, not 1,500 threads fighting for the GIL: the load
generator's own CPU stays small beside the portal's, and is measured (`generator_cpu`).

Each request is recorded as a report.Sample (one per HTTP request, redirects included), with
an error kind when the answer is not what a working portal sends. Cookies marked Secure are
sent over plain http too: the load test talks to nginx on 127.0.0.1 without TLS.
"""

from __future__ import annotations

import asyncio
import html
import re
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlencode, urljoin, urlsplit

from bench.loadtest.report import Sample, page_name

_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class Recorder:
    """Collects samples from every person; times are seconds since the recorder was made."""

    def __init__(self) -> None:
        self.origin = time.monotonic()
        self._lock = threading.Lock()  # the fault plan's thread reads while the loop adds
        self.samples: list[Sample] = []

    def now(self) -> float:
        return time.monotonic() - self.origin

    def add(self, sample: Sample) -> None:
        with self._lock:
            self.samples.append(sample)


class StepFailed(Exception):
    """A request did not get the answer a working portal gives (already recorded)."""


class _Broken(Exception):
    """The connection gave no (complete) answer."""


@dataclass
class Page:
    """A response: status, the path it came from, its body and its redirect target."""

    status: int
    path: str
    body: str
    location: str = ""

    def csrf(self) -> str:
        """Return the CSRF token of the page's first form."""
        match = _CSRF.search(self.body)
        if match is None:
            raise StepFailed(f"no CSRF token on {self.path}")
        return html.unescape(match.group(1))


@dataclass
class _Response:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str:
        for key, value in self.headers:
            if key == name:
                return value
        return ""


class Browser:
    """One person's browser: a cookie jar and a keep-alive connection to nginx."""

    def __init__(self, host: str, port: int, recorder: Recorder, timeout: float = 30) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.recorder = recorder
        self.cookies: dict[str, str] = {}
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None

    async def get(
        self, path: str, *, expect: tuple[int, ...] = (200,), follow: bool = True
    ) -> Page:
        return await self.request("GET", path, expect=expect, follow=follow)

    async def post(
        self, path: str, data: dict[str, str], *, expect: tuple[int, ...] = (302,), **kw
    ) -> Page:
        return await self.request("POST", path, data=data, expect=expect, **kw)

    async def request(
        self,
        method: str,
        path: str,
        *,
        data: dict[str, str] | None = None,
        expect: tuple[int, ...] = (200,),
        follow: bool = False,
    ) -> Page:
        """Send one request (following redirects with GETs if asked); raise StepFailed."""
        page = await self._one(method, path, data, expect=expect if not follow else (*expect, 302))
        hops = 0
        while follow and page.status == 302 and hops < 5:
            hops += 1
            page = await self._one("GET", page.location, None, expect=(200, 302))
        return page

    async def _one(self, method: str, path: str, data: dict[str, str] | None, *, expect) -> Page:
        body = urlencode(data).encode() if data is not None else b""
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}", "Accept: text/html"]
        if self.cookies:
            lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        if data is not None:
            lines.append("Content-Type: application/x-www-form-urlencoded")
        if method == "POST":
            lines.append(f"Content-Length: {len(body)}")
        message = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
        started = self.recorder.now()
        name = page_name(method, path)
        try:
            response = await asyncio.wait_for(self._send(message), self.timeout)
        except (TimeoutError, OSError, _Broken) as error:
            self.close()
            kind = "timeout" if isinstance(error, TimeoutError) else type(error).__name__
            self._record(name, started, 0, f"no answer: {kind}")
            raise StepFailed(f"{method} {path}: {kind}") from None
        if response.status not in expect:
            self._record(name, started, response.status, f"HTTP {response.status}")
            raise StepFailed(f"{method} {path} answered {response.status}, expected {expect}")
        self._record(name, started, response.status, None)
        location = response.header("location")
        if location:
            location = urlsplit(urljoin(path, location))._replace(scheme="", netloc="").geturl()
        text = response.body.decode("utf-8", "replace")
        return Page(response.status, path, text, location)

    async def _send(self, message: bytes) -> _Response:
        for reused in (self._writer is not None, False):
            if self._writer is None:
                self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
            try:
                self._writer.write(message)
                await self._writer.drain()
                response = await self._read(self._reader)
            except (ConnectionResetError, BrokenPipeError, _Broken):
                # A keep-alive connection nginx closed while idle: a browser opens a new one.
                self.close()
                if reused:
                    continue
                raise
            self._keep_cookies([v for k, v in response.headers if k == "set-cookie"])
            if response.header("connection").lower() == "close":
                self.close()
            return response
        raise ConnectionError("unreachable")  # pragma: no cover

    @staticmethod
    async def _read(reader: asyncio.StreamReader) -> _Response:
        """Read one HTTP/1.1 response: status, headers, and a sized or chunked body."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError) as error:
            raise _Broken from error
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        status = int(status_line.split(" ", 2)[1])
        headers = []
        for line in header_lines:
            if line:
                key, _, value = line.partition(":")
                headers.append((key.strip().lower(), value.strip()))
        response = _Response(status, headers, b"")
        try:
            if response.header("transfer-encoding").lower() == "chunked":
                parts = []
                while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
                    parts.append(await reader.readexactly(size + 2))
                await reader.readuntil(b"\r\n")  # the empty trailer
                response.body = b"".join(part[:-2] for part in parts)
            elif length := response.header("content-length"):
                response.body = await reader.readexactly(int(length))
        except asyncio.IncompleteReadError as error:
            raise _Broken from error
        return response

    def _keep_cookies(self, headers: list[str]) -> None:
        for header in headers:
            pair, _, attributes = header.partition(";")
            name, _, value = pair.strip().partition("=")
            gone = "max-age=0" in attributes.lower().replace(" ", "") or not value
            if gone:
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value

    def _record(self, name: str, started: float, status: int, error: str | None) -> None:
        sample = Sample(name, started, self.recorder.now() - started, status, error)
        self.recorder.add(sample)
