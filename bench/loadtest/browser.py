"""A small browser for simulated people: keep-alive http.client, cookies, redirects, timing.

Each request is recorded as a report.Sample (one per HTTP request, redirects included), with
an error kind when the answer is not what a working portal sends. Cookies marked Secure are
sent over plain http too: the load test talks to nginx on 127.0.0.1 without TLS.
"""

from __future__ import annotations

import html
import re
import threading
import time
from dataclasses import dataclass
from http.client import HTTPConnection, HTTPException
from urllib.parse import urlencode, urljoin, urlsplit

from bench.loadtest.report import Sample, page_name

_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class Recorder:
    """Collects samples from every thread; times are seconds since the recorder was made."""

    def __init__(self) -> None:
        self.origin = time.monotonic()
        self._lock = threading.Lock()
        self.samples: list[Sample] = []

    def now(self) -> float:
        return time.monotonic() - self.origin

    def add(self, sample: Sample) -> None:
        with self._lock:
            self.samples.append(sample)


class StepFailed(Exception):
    """A request did not get the answer a working portal gives (already recorded)."""


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


class Browser:
    """One person's browser: a cookie jar and a keep-alive connection to nginx."""

    def __init__(self, host: str, port: int, recorder: Recorder, timeout: float = 30) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.recorder = recorder
        self.cookies: dict[str, str] = {}
        self._connection: HTTPConnection | None = None

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def get(self, path: str, *, expect: tuple[int, ...] = (200,), follow: bool = True) -> Page:
        return self.request("GET", path, expect=expect, follow=follow)

    def post(
        self, path: str, data: dict[str, str], *, expect: tuple[int, ...] = (302,), **kw
    ) -> Page:
        return self.request("POST", path, data=data, expect=expect, **kw)

    def request(
        self,
        method: str,
        path: str,
        *,
        data: dict[str, str] | None = None,
        expect: tuple[int, ...] = (200,),
        follow: bool = False,
    ) -> Page:
        """Send one request (following redirects with GETs if asked); raise StepFailed."""
        page = self._one(method, path, data, expect=expect if not follow else (*expect, 302))
        hops = 0
        while follow and page.status == 302 and hops < 5:
            hops += 1
            page = self._one("GET", page.location, None, expect=(200, 302))
        return page

    def _one(self, method: str, path: str, data: dict[str, str] | None, *, expect) -> Page:
        body = urlencode(data).encode() if data is not None else None
        headers = {"Host": f"{self.host}:{self.port}", "Accept": "text/html"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        started = self.recorder.now()
        name = page_name(method, path)
        try:
            status, location, text = self._send(method, path, body, headers)
        except (OSError, HTTPException) as error:
            self.close()
            kind = "timeout" if isinstance(error, TimeoutError) else type(error).__name__
            self._record(name, started, 0, f"no answer: {kind}")
            raise StepFailed(f"{method} {path}: {kind}") from None
        if status not in expect:
            self._record(name, started, status, f"HTTP {status}")
            raise StepFailed(f"{method} {path} answered {status}, expected {expect}")
        self._record(name, started, status, None)
        return Page(status, path, text, location)

    def _send(self, method: str, path: str, body: bytes | None, headers: dict[str, str]):
        for reused in (self._connection is not None, False):
            if self._connection is None:
                self._connection = HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                self._connection.request(method, path, body=body, headers=headers)
                response = self._connection.getresponse()
                text = response.read().decode("utf-8", "replace")
            except (ConnectionResetError, BrokenPipeError, HTTPException):
                # A keep-alive connection nginx closed while idle: a browser opens a new one.
                self.close()
                if reused:
                    continue
                raise
            self._keep_cookies(response.headers.get_all("Set-Cookie") or [])
            if (response.getheader("Connection") or "").lower() == "close":
                self.close()
            location = response.getheader("Location") or ""
            if location:
                location = urlsplit(urljoin(path, location))._replace(scheme="", netloc="")
                location = location.geturl()
            return response.status, location, text
        raise ConnectionError("unreachable")  # pragma: no cover

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
