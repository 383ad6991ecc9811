"""What simulated people do: a learner's whole assessment, and staff reading their pages.

A learner signs in, starts, answers every question (the page's autosave sends each choice, as
the page's script does, sometimes changing their mind), saves each page, checks, sends, and
waits for the results as the waiting page does (asking /status/ every 15 s). A step that fails
(a 502 while a server is killed, say) is tried again after a pause, as a person reloads.
"""

from __future__ import annotations

import random
import re
import threading
import time
from dataclasses import dataclass, field

from bench.loadtest.browser import Browser, Page, Recorder, StepFailed

_RADIO = re.compile(r'<input type="radio" name="(q\d+)" id="[^"]*" value="([^"]+)"')
_ASSESSMENT = re.compile(r"/me/assessments/(\d+)/")
_STATUS_URL = re.compile(r'data-status-url="([^"]+)"')
_WAITING = 'id="results-wait"'
STEP_TRIES = 20
RETRY_PAUSE = 2.0
STATUS_EVERY = 15.0  # the waiting page's data-refresh-seconds
CHANGE_MIND = 0.1  # how often a learner picks an answer again


@dataclass
class Outcome:
    """What one learner did: the attempt sent, the answer ids saved last, whether done."""

    username: str
    assessment_id: int | None = None
    saved: dict[str, str] = field(default_factory=dict)  # field name -> answer id saved last
    sent: bool = False
    completed: bool = False
    failure: str = ""


class Person:
    """Shared by learners and staff: a browser, a pause between steps, retries."""

    def __init__(self, browser: Browser, think: float, stop: threading.Event, seed: int) -> None:
        self.browser = browser
        self.think_seconds = think
        self.stop = stop
        self.random = random.Random(seed)

    def think(self, scale: float = 1.0) -> None:
        """Pause as a person reads or chooses (0.5 to 1.5 times the usual)."""
        self.stop.wait(self.think_seconds * scale * self.random.uniform(0.5, 1.5))

    def step(self, action):
        """Run a step until it works, pausing between tries; give up after STEP_TRIES."""
        for _ in range(STEP_TRIES - 1):
            if self.stop.is_set():
                raise StepFailed("stopped")
            try:
                return action()
            except StepFailed:
                self.browser.close()
                self.stop.wait(RETRY_PAUSE)
        return action()

    def sign_in(self, username: str, password: str, landing: str) -> Page:
        def attempt() -> Page:
            form = self.browser.get("/accounts/login/")
            data = {"csrfmiddlewaretoken": form.csrf(), "username": username}
            data["password"] = password
            page = self.browser.post("/accounts/login/", data, follow=True)
            if landing not in page.path:
                raise StepFailed(f"signed in to {page.path}, not {landing}")
            return page

        return self.step(attempt)


class Learner(Person):
    """One learner's journey from sign-in to reading the results."""

    def run(self, outcome: Outcome, password: str) -> None:
        try:
            self._journey(outcome, password)
        except StepFailed as failure:
            outcome.failure = str(failure)
        except Exception as error:  # a page the generator cannot read: report, not crash
            outcome.failure = f"unexpected: {error!r}"
        finally:
            self.browser.close()

    def _journey(self, outcome: Outcome, password: str) -> None:
        me = self.sign_in(outcome.username, password, "/me/")
        self.think()
        page = self.step(lambda: self._start(me))
        outcome.assessment_id = int(_ASSESSMENT.search(page.path).group(1))
        base = f"/me/assessments/{outcome.assessment_id}"
        while "/page/" in page.path:
            page = self._answer_page(page, outcome, base)
        if "/check/" not in page.path:
            raise StepFailed(f"expected the check page, got {page.path}")
        self.think(2)
        page = self.step(lambda: self._send(base))
        outcome.sent = True
        while _WAITING in page.body:
            status_url = _STATUS_URL.search(page.body).group(1)
            self.stop.wait(STATUS_EVERY)
            if self.stop.is_set():
                raise StepFailed("stopped while waiting for results")
            state = self.step(lambda: self.browser.get(status_url))  # noqa: B023
            if '"waiting": false' in state.body:
                page = self.step(lambda: self.browser.get(f"{base}/results/"))
        self.think(3)
        self.step(lambda: self.browser.get("/me/"))
        outcome.completed = True

    def _start(self, me: Page) -> Page:
        page = self.browser.get("/me/") if me.status != 200 else me
        return self.browser.post("/me/start/", {"csrfmiddlewaretoken": page.csrf()}, follow=True)

    def _answer_page(self, page: Page, outcome: Outcome, base: str) -> Page:
        """Answer every question of a page (autosaving each), then save the page."""
        number = page.path.rstrip("/").rsplit("/", 1)[1]
        choices: dict[str, list[str]] = {}
        for name, value in _RADIO.findall(page.body):
            choices.setdefault(name, []).append(value)
        if not choices:
            raise StepFailed(f"no questions on {page.path}")
        token = page.csrf()
        chosen: dict[str, str] = {}
        for name, answers in choices.items():
            for _ in range(2 if self.random.random() < CHANGE_MIND else 1):
                self.think()
                answer = self.random.choice(answers)
                data = {"csrfmiddlewaretoken": token, "page": number, name: answer}
                self.step(lambda d=data: self.browser.post(f"{base}/answers/", d, expect=(200,)))
                chosen[name] = answer
                outcome.saved[name] = answer
        self.think()
        path = page.path

        def save() -> Page:
            data = {"csrfmiddlewaretoken": token, **chosen}
            return self.browser.post(path, data, follow=True)

        following = self.step(save)
        outcome.saved.update(chosen)
        return following

    def _send(self, base: str) -> Page:
        check = self.browser.get(f"{base}/check/", expect=(200, 302), follow=True)
        if "/results/" in check.path:
            return check  # sent already: a first try's answer was lost in the kill
        data = {"csrfmiddlewaretoken": check.csrf()}
        return self.browser.post(f"{base}/submit/", data, follow=True)


class Staff(Person):
    """A member of staff reading the dashboard and the learner list until the run ends."""

    def run(self, username: str, password: str) -> None:
        try:
            self.sign_in(username, password, "/")
            while not self.stop.is_set():
                for path in ("/dashboard/", "/learners/", f"/learners/?page={self._page()}"):
                    self.step(lambda p=path: self.browser.get(p))
                    self.think()
                    if self.stop.is_set():
                        break
        except StepFailed:
            pass
        finally:
            self.browser.close()

    def _page(self) -> int:
        return self.random.randint(1, 3)


def spread(count: int, seconds: float) -> list[float]:
    """Return when each of `count` people starts: evenly over `seconds`, from 0."""
    if count <= 1:
        return [0.0] * count
    return [seconds * index / (count - 1) for index in range(count)]


def run_people(
    recorder: Recorder,
    host: str,
    port: int,
    learners: list[tuple[str, float]],
    password: str,
    think: float,
    stop: threading.Event,
) -> tuple[list[Outcome], list[threading.Thread]]:
    """Start each learner at its time (seconds from now) in a thread; return their outcomes."""
    outcomes = [Outcome(username) for username, _ in learners]
    threads = []
    origin = time.monotonic()

    def one(index: int, delay: float) -> None:
        if stop.wait(max(0.0, origin + delay - time.monotonic())):
            return
        browser = Browser(host, port, recorder)
        Learner(browser, think, stop, seed=index).run(outcomes[index], password)

    for index, (_, delay) in enumerate(learners):
        thread = threading.Thread(target=one, args=(index, delay), daemon=True)
        thread.start()
        threads.append(thread)
    return outcomes, threads
