"""A class signing in at once under gunicorn: 30 pupils by card, beside 30 by password.

A primary group of 30 pupils (passwords hashed by the portal's own Argon2id), their cards
(lessons.services.group_cards_print) and an open sign-in window are set up in this process;
gunicorn serves the portal as in the pages part. Each round, 30 threads (one fresh cookie jar
each) load the sign-in page, wait at a barrier, then sign in together; each pupil's time is from
the barrier to the final 302. Card and password rounds alternate, so both see the same machine.
"""

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.client import HTTPConnection, HTTPException
from importlib import import_module
from statistics import median
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.hashers import get_hasher

from bench.lists import staff_user
from bench.pages import start_gunicorn
from bench.support import percentile
from classes.models import SchoolGroup, current_academic_year
from classes.services import group_create, group_learners_add
from learners.models import Learner, Level
from lessons.services import group_cards_print, window_close, window_open

PUPILS = 30
ROUNDS = 3
TARGET_P95_MS = 500.0  # by card
TARGET_PASSWORD_P95_MS = 1000.0
PASSWORD = "bench-sign-in-password"
GROUP_NAME = "Bench card sign-in"
USERNAME = "bench.cards.{:02d}"
# A pupil's tablet: the card session records a device description.
USER_AGENT = (
    "Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 "
    "Mobile/15E148 Safari/604.1"
)
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class Browser:
    """One pupil's browser: its own cookies, and the CSRF token of the last form it was shown."""

    def __init__(self, port: int):
        self.port = port
        self.cookies: dict[str, str] = {}
        self.token = ""

    def request(
        self, method: str, path: str, data: dict[str, str] | None = None
    ) -> tuple[int, str, str]:
        """Send one request (a form POST when data is given); return status, Location, body."""
        headers = {"User-Agent": USER_AGENT}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if data is not None:
            body = urlencode({**data, "csrfmiddlewaretoken": self.token})
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        # A new connection each time: gunicorn's sync workers close every one anyway.
        connection = HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            text = response.read().decode()
        finally:
            connection.close()
        for name, value in response.getheaders():
            if name.lower() == "set-cookie":
                key, _, rest = value.partition("=")
                cookie = rest.split(";", 1)[0].strip('"')
                if cookie:
                    self.cookies[key] = cookie
                else:  # deleted (an expired, empty cookie)
                    self.cookies.pop(key, None)
        if found := CSRF_INPUT.search(text):
            self.token = found.group(1)
        return response.status, response.getheader("Location", ""), text


@dataclass
class Pupil:
    """One of the bench's pupils: their username and printed card's QR secret and name."""

    username: str
    first_name: str
    secret: str


@dataclass
class Try:
    """One pupil's sign-in: milliseconds from the barrier, and what went wrong ("" if none)."""

    ms: float
    problem: str
    session_key: str = ""


@dataclass
class Figures:
    """The timed rounds of one way of signing in."""

    rounds: list[list[Try]] = field(default_factory=list)

    def all_signed_in(self) -> bool:
        return all(not t.problem for tries in self.rounds for t in tries)

    def first_problem(self) -> str:
        return next((t.problem for tries in self.rounds for t in tries if t.problem), "")

    def per_round(self, fraction: float) -> list[float]:
        return [percentile([t.ms for t in tries], fraction) for tries in self.rounds]


def setup_group() -> tuple[SchoolGroup, list[Learner], AbstractBaseUser]:
    """Create (once) the primary group and its 30 active pupils with hashed passwords."""
    staff = staff_user()
    group = SchoolGroup.objects.filter(name=GROUP_NAME, academic_year=current_academic_year())
    group = group.first() or group_create(
        name=GROUP_NAME, level=Level.PRIMARY, created_by=staff, address=None
    )
    learners = []
    for number in range(1, PUPILS + 1):
        username = USERNAME.format(number)
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            # Hashed with the first of PASSWORD_HASHERS (Argon2id), as a real account is.
            user = get_user_model().objects.create_user(username, password=PASSWORD)
        elif _hashed_otherwise(user.password):
            # Made by an earlier version (PBKDF2): hashed again as the portal hashes now, or
            # the first round would measure the upgrade at sign-in instead.
            user.set_password(PASSWORD)
            user.save(update_fields=["password"])
        learner, _ = Learner.objects.update_or_create(
            user=user,
            defaults={
                "username": username,
                "first_name": f"Pupil{number:02d}",
                "last_name": "Bench",
                "upstream_user_id": f"bench-cards-{number:02d}",
                "level": Level.PRIMARY,
                "status": Learner.Status.ACTIVE,
            },
        )
        learners.append(learner)
    group_learners_add(group=group, learners=learners, added_by=staff, address=None)
    return group, learners, staff


def window_fresh(group: SchoolGroup, staff: AbstractBaseUser) -> None:
    """Close the group's window (ending every card session) and open a new one."""
    # Each card has one live session: last round's (or last run's) would refuse this round's.
    window_close(group=group, closed_by=staff, address=None)
    window_open(group=group, minutes=30, opened_by=staff, address=None)


def card_flow(pupil: Pupil) -> Callable[[Browser], str]:
    """Return the timed part of a card sign-in: scan, then "That's me"."""

    def flow(browser: Browser) -> str:
        status, _, text = browser.request("POST", "/card/", {"secret": pupil.secret})
        if status != 200 or "That's me" not in text or pupil.first_name not in text:
            return f"card POST answered {status}, not That's me: {pupil.first_name}"
        status, location, _ = browser.request("POST", "/card/", {"confirm": "1"})
        if status != 302 or location != "/me/":
            return f"confirm answered {status} {location!r}, not 302 to /me/"
        return ""

    return flow


def password_flow(pupil: Pupil) -> Callable[[Browser], str]:
    """Return the timed part of a password sign-in: the form's POST."""

    def flow(browser: Browser) -> str:
        data = {"username": pupil.username, "password": PASSWORD}
        status, location, _ = browser.request("POST", "/accounts/login/", data)
        if status != 302 or "/accounts/login/" in location:
            return f"sign-in POST answered {status} {location!r}, not a 302 onwards"
        return ""

    return flow


def together(port: int, page: str, flows: list[Callable[[Browser], str]]) -> list[Try]:
    """Load `page` in a fresh browser per flow, then run every flow at once; time each."""
    barrier = threading.Barrier(len(flows), timeout=120)
    tries: list[Try] = [Try(0.0, "did not run")] * len(flows)

    def pupil(index: int, flow: Callable[[Browser], str]) -> None:
        browser = Browser(port)
        try:
            status, _, _ = browser.request("GET", page)  # the CSRF cookie and the form's token
            problem = "" if status == 200 and browser.token else f"GET {page} answered {status}"
        except (OSError, HTTPException) as error:
            problem = f"GET {page}: {type(error).__name__}: {error}"
        barrier.wait()  # even after a failed GET, so that the others are not left waiting
        started = time.perf_counter()
        if not problem:
            try:
                problem = flow(browser)
            except (OSError, HTTPException) as error:
                problem = f"{type(error).__name__}: {error}"
        spent = (time.perf_counter() - started) * 1000
        session = browser.cookies.get(settings.SESSION_COOKIE_NAME, "")
        tries[index] = Try(spent, problem, session)

    threads = [threading.Thread(target=pupil, args=pair) for pair in enumerate(flows)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return tries


def measure(env: dict[str, str], rounds: int = ROUNDS) -> tuple[Figures, Figures]:
    """Sign the class in by card and by password, `rounds` times each after a warm-up."""
    group, learners, staff = setup_group()
    printed = group_cards_print(group=group, learners=learners, printed_by=staff, address=None)
    pupils = [Pupil(c.learner.username, c.learner.first_name, c.secret) for c in printed]
    cards, passwords, sessions = Figures(), Figures(), []
    process, port = start_gunicorn(env)
    try:
        # Round 0 warms both workers up (imports, templates, connections) and is not counted.
        for number in range(rounds + 1):
            window_fresh(group, staff)
            card = together(port, "/card/", [card_flow(p) for p in pupils])
            password = together(port, "/accounts/login/", [password_flow(p) for p in pupils])
            sessions += [t.session_key for t in card + password if t.session_key]
            if number:
                cards.rounds.append(card)
                passwords.rounds.append(password)
    finally:
        process.terminate()
        process.wait(timeout=30)
        window_close(group=group, closed_by=staff, address=None)
        # The bench's browsers are gone: their sessions would only wait to expire.
        store = import_module(settings.SESSION_ENGINE).SessionStore
        for key in sessions:
            store(session_key=key).delete()
    return cards, passwords


def _hashed_otherwise(encoded: str) -> bool:
    """Return whether a hash is not the preferred hasher's at today's costs."""
    hasher = get_hasher()
    return not encoded.startswith(f"{hasher.algorithm}$") or hasher.must_update(encoded)


def rows(env: dict[str, str], *, rounds: int = ROUNDS) -> list[tuple[str, str, str, str]]:
    """Measure a class signing in at once and return the table rows.

    Each round's p50 and p95 are over its 30 pupils; the row shows the median of the rounds'
    (and every round's p95), and the slowest pupil of all rounds.
    """
    cards, passwords = measure(env, rounds=rounds)
    table = []
    for label, figures, target in (
        ("card sign-in (scan + That's me)", cards, TARGET_P95_MS),
        ("password sign-in (Argon2id)", passwords, TARGET_PASSWORD_P95_MS),
    ):
        p50, p95s = median(figures.per_round(0.5)), figures.per_round(0.95)
        slowest = max(t.ms for tries in figures.rounds for t in tries)
        signed = sum(not t.problem for tries in figures.rounds for t in tries)
        measured = (
            f"{p50:,.0f} / {median(p95s):,.0f} / {slowest:,.0f} ms"
            f" (p95 by round {' / '.join(f'{x:,.0f}' for x in p95s)});"
            f" {signed}/{PUPILS * rounds} signed in"
        )
        if not figures.all_signed_in():
            measured += f"; first failure: {figures.first_problem()}"
            verdict = "FAIL"
        else:
            verdict = "PASS" if median(p95s) < target else "FAIL"
        table.append(
            (
                f"{label}, {PUPILS} at once: p50 / p95 / max"
                f" (gunicorn 2 sync workers; median of {rounds} rounds)",
                measured,
                f"p95 < {target:g} ms",
                verdict,
            )
        )
    return table
