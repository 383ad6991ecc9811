"""What simulated people do: a learner's whole assessment, and staff reading their pages.

A learner signs in, starts, answers every question (the page's autosave sends each choice, as
the page's script does, sometimes changing their mind), saves each page, checks, sends, and
waits for the results as the waiting page does (asking /status/ every 15 s). A step that fails
(a 502 while a server is killed, say) is tried again after a pause, as a person reloads.

Every person is a coroutine of one event loop, run in a thread of its own (`Load`), so that
the run's other thread can kill processes on time meanwhile.
"""

from __future__ import annotations

import asyncio
import random
import re
import resource
import threading
from dataclasses import dataclass, field

from bench.loadtest.browser import Browser, Page, Recorder, StepFailed

# A radio button's name and value, whatever other attributes (data-speak, say) stand between.
_RADIO = re.compile(r'<input type="radio"[^>]*? name="(q\d+)"[^>]*? value="([^"]+)"')
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


async def pause(halt: asyncio.Event, seconds: float) -> bool:
    """Wait `seconds`, or less if the run is halted; return whether it was."""
    if halt.is_set():
        return True
    try:
        await asyncio.wait_for(halt.wait(), max(0.0, seconds))
    except TimeoutError:
        return False
    return True


class Person:
    """Shared by learners and staff: a browser, a pause between steps, retries."""

    def __init__(self, browser: Browser, think: float, halt: asyncio.Event, seed: int) -> None:
        self.browser = browser
        self.think_seconds = think
        self.halt = halt
        self.random = random.Random(seed)

    async def think(self, scale: float = 1.0) -> None:
        """Pause as a person reads or chooses (0.5 to 1.5 times the usual)."""
        await pause(self.halt, self.think_seconds * scale * self.random.uniform(0.5, 1.5))

    async def step(self, action):
        """Run a step until it works, pausing between tries; give up after STEP_TRIES."""
        for _ in range(STEP_TRIES - 1):
            if self.halt.is_set():
                raise StepFailed("stopped")
            try:
                return await action()
            except StepFailed:
                self.browser.close()
                await pause(self.halt, RETRY_PAUSE)
        return await action()

    async def sign_in(self, username: str, password: str, landing: str) -> Page:
        async def attempt() -> Page:
            form = await self.browser.get("/accounts/login/")
            data = {"csrfmiddlewaretoken": form.csrf(), "username": username}
            data["password"] = password
            page = await self.browser.post("/accounts/login/", data, follow=True)
            if landing not in page.path:
                raise StepFailed(f"signed in to {page.path}, not {landing}")
            return page

        return await self.step(attempt)


class Learner(Person):
    """One learner's journey from sign-in to reading the results."""

    async def run(self, outcome: Outcome, password: str) -> None:
        try:
            await self._journey(outcome, password)
        except StepFailed as failure:
            outcome.failure = str(failure)
        except Exception as error:  # a page the generator cannot read: report, not crash
            outcome.failure = f"unexpected: {error!r}"
        finally:
            self.browser.close()

    async def _journey(self, outcome: Outcome, password: str) -> None:
        me = await self.sign_in(outcome.username, password, "/me/")
        await self.think()
        page = await self.step(lambda: self._start(me))
        outcome.assessment_id = int(_ASSESSMENT.search(page.path).group(1))
        base = f"/me/assessments/{outcome.assessment_id}"
        while "/page/" in page.path:
            page = await self._answer_page(page, outcome, base)
        if "/check/" not in page.path:
            raise StepFailed(f"expected the check page, got {page.path}")
        await self.think(2)
        page = await self.step(lambda: self._send(base))
        outcome.sent = True
        while _WAITING in page.body:
            status_url = _STATUS_URL.search(page.body).group(1)
            if await pause(self.halt, STATUS_EVERY):
                raise StepFailed("stopped while waiting for results")
            state = await self.step(lambda: self.browser.get(status_url))  # noqa: B023
            if '"waiting": false' in state.body:
                page = await self.step(lambda: self.browser.get(f"{base}/results/"))
        await self.think(3)
        await self.step(lambda: self.browser.get("/me/"))
        outcome.completed = True

    async def _start(self, me: Page) -> Page:
        page = await self.browser.get("/me/") if me.status != 200 else me
        data = {"csrfmiddlewaretoken": page.csrf()}
        return await self.browser.post("/me/start/", data, follow=True)

    async def _answer_page(self, page: Page, outcome: Outcome, base: str) -> Page:
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
                await self.think()
                answer = self.random.choice(answers)
                data = {"csrfmiddlewaretoken": token, "page": number, name: answer}
                await self.step(
                    lambda d=data: self.browser.post(f"{base}/answers/", d, expect=(200,))
                )
                chosen[name] = answer
                outcome.saved[name] = answer
        await self.think()
        path = page.path

        async def save() -> Page:
            data = {"csrfmiddlewaretoken": token, **chosen}
            return await self.browser.post(path, data, follow=True)

        following = await self.step(save)
        outcome.saved.update(chosen)
        return following

    async def _send(self, base: str) -> Page:
        check = await self.browser.get(f"{base}/check/", expect=(200, 302), follow=True)
        if "/results/" in check.path:
            return check  # sent already: a first try's answer was lost in the kill
        data = {"csrfmiddlewaretoken": check.csrf()}
        return await self.browser.post(f"{base}/submit/", data, follow=True)


class Staff(Person):
    """A member of staff reading the dashboard and the learner list until the run ends."""

    async def run(self, username: str, password: str) -> None:
        try:
            await self.sign_in(username, password, "/")
            while not self.halt.is_set():
                for path in ("/dashboard/", "/learners/", f"/learners/?page={self._page()}"):
                    await self.step(lambda p=path: self.browser.get(p))
                    await self.think()
                    if self.halt.is_set():
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


class Load:
    """The run's learners and staff as coroutines of one event loop, in a thread of its own.

    `learners_done` is set once every learner has finished or given up; `stop()` halts the
    staff and any learner still going. `cpu_seconds` is what this process spent meanwhile
    (the load generator's cost: user and system time of every thread).
    """

    def __init__(
        self,
        recorder: Recorder,
        address: tuple[str, int],
        learners: list[tuple[str, float]],
        staff: list[str],
        password: str,
        think: float,
    ) -> None:
        self.recorder, self.address = recorder, address
        self.learners, self.staff = learners, staff
        self.password, self.think = password, think
        self.outcomes = [Outcome(username) for username, _ in learners]
        self.learners_done = threading.Event()
        self.cpu_seconds = 0.0
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._halt: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="load", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait()

    def stop(self, timeout: float = 30) -> None:
        """Halt everyone and wait for the loop to end."""
        if self._loop is not None and self._halt is not None:
            self._loop.call_soon_threadsafe(self._halt.set)
        self._thread.join(timeout=timeout)

    def _run(self) -> None:
        before = _cpu()
        try:
            asyncio.run(self._main())
        finally:
            self.cpu_seconds = _cpu() - before

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._halt = asyncio.Event()
        self._ready.set()
        staff = [
            asyncio.create_task(self._staff(username, index))
            for index, username in enumerate(self.staff)
        ]
        await asyncio.gather(
            *(self._learner(index, delay) for index, (_, delay) in enumerate(self.learners))
        )
        self.learners_done.set()
        await self._halt.wait()
        await asyncio.gather(*staff)

    async def _learner(self, index: int, delay: float) -> None:
        if await pause(self._halt, delay):
            return
        browser = Browser(*self.address, self.recorder)
        learner = Learner(browser, self.think, self._halt, seed=index)
        await learner.run(self.outcomes[index], self.password)

    async def _staff(self, username: str, index: int) -> None:
        browser = Browser(*self.address, self.recorder)
        await Staff(browser, self.think * 2, self._halt, seed=1000 + index).run(
            username, self.password
        )


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
