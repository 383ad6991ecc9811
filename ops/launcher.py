"""Start several processes side by side, restart one that dies, stop them all together.

`manage.py serve` runs the web server, the workers and the sweeps with it. A process that stops
by itself (a crash, a kill, the out-of-memory killer) is started again after a pause that
doubles with each of its recent deaths; the others go on meanwhile. Only when processes keep
dying (`restart_limit` deaths within `restart_window` seconds, all processes counted together)
does the launcher give up, say so, and stop everything, so that a service manager or a person
sees it.
"""

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Child:
    """One process the launcher runs: a name for messages and its command line."""

    name: str
    args: Sequence[str]
    process: subprocess.Popen | None = field(default=None, repr=False)
    deaths: list[float] = field(default_factory=list, repr=False)  # monotonic times
    restart_at: float | None = field(default=None, repr=False)


class GiveUp(Exception):
    """The launcher stops everything: a process could not start, or they keep dying."""


class Launcher:
    """Run children in their own process groups; restart the dead; stop all on a signal.

    Each child leads its own process group, so a terminal's Ctrl-C reaches only the launcher,
    which then stops every child in order (TERM to the whole group, so gunicorn's workers and
    anything a child started go too), waits up to `stop_timeout` seconds, and kills what is
    left. A second Ctrl-C or TERM kills at once.
    """

    def __init__(
        self,
        children: Sequence[Child],
        *,
        cwd: Path,
        env: dict[str, str],
        stop_timeout: float = 40.0,
        restart_limit: int = 5,
        restart_window: float = 300.0,
        restart_pause: float = 1.0,
        restart_pause_cap: float = 30.0,
        say: Callable[[str], None] = print,
    ) -> None:
        self.children = list(children)
        self.cwd = cwd
        self.env = env
        self.stop_timeout = stop_timeout
        self.restart_limit = restart_limit
        self.restart_window = restart_window
        self.restart_pause = restart_pause
        self.restart_pause_cap = restart_pause_cap
        self.say = say
        self.signals_received = 0

    def run(self) -> int:
        """Start every child and supervise them; return the exit status for the launcher."""
        # SIGHUP too: a closed terminal must not leave the children running in their groups.
        stop_signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        previous = {sig: signal.signal(sig, self._on_signal) for sig in stop_signals}
        try:
            try:
                for child in self.children:
                    if self.signals_received:
                        break
                    self._start(child)
                self._supervise()
            except GiveUp as reason:
                self.say(f"{reason} Stopping the web server, the workers and the sweeps.")
                self._stop_all()
                return 1
            self.say("Stopping the web server, the workers and the sweeps.")
            self._stop_all()
            return 0
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _start(self, child: Child) -> None:
        try:
            child.process = subprocess.Popen(  # noqa: S603 (our own command lines)
                list(child.args), cwd=self.cwd, env=self.env, process_group=0
            )
        except OSError as error:
            raise GiveUp(f"{child.name} could not start ({error}).") from error

    def _supervise(self) -> None:
        """Restart children that die, until a signal comes; GiveUp when they keep dying."""
        while not self.signals_received:
            now = time.monotonic()
            for child in self.children:
                if child.process is not None and child.process.poll() is not None:
                    self._bury(child, now)
                elif child.restart_at is not None and child.restart_at <= now:
                    child.restart_at = None
                    self._start(child)
                    self.say(f"{child.name} started again.")
            time.sleep(0.2)

    def _bury(self, child: Child, now: float) -> None:
        """Note a child's death and plan its restart; GiveUp past the limit."""
        status = describe_exit(child.process.returncode)
        # At once, while its number cannot be another's yet: whatever it started goes too
        # (gunicorn's workers would keep the port).
        self._signal_groups(signal.SIGKILL, [child])
        child.process = None
        child.deaths.append(now)
        recent = [t for c in self.children for t in c.deaths if t > now - self.restart_window]
        if len(recent) >= self.restart_limit:
            raise GiveUp(
                f"{child.name} stopped by itself ({status}). {len(recent)} processes have "
                f"stopped by themselves within {minutes(self.restart_window)}: restarting them "
                "does not help, so something needs a person (the lines above say what)."
            )
        own = sum(1 for t in child.deaths if t > now - self.restart_window)
        pause = min(self.restart_pause_cap, self.restart_pause * 2 ** (own - 1))
        child.restart_at = now + pause
        self.say(f"{child.name} stopped by itself ({status}); starting it again in {pause:g} s.")

    def _on_signal(self, signum: int, frame: object) -> None:
        self.signals_received += 1
        if self.signals_received > 1:
            # The operator asked twice: no more waiting for graceful ends.
            self._signal_groups(signal.SIGKILL, self._running())

    def _running(self) -> list[Child]:
        return [c for c in self.children if c.process is not None and c.process.poll() is None]

    def _signal_groups(self, sig: int, children: list[Child]) -> None:
        # Only children just reaped or not yet: a leader's pid (its group's id) reaped long
        # ago may be reused.
        for child in children:
            with contextlib.suppress(ProcessLookupError):  # the whole group is gone already
                os.killpg(child.process.pid, sig)

    def _stop_all(self) -> None:
        for child in self.children:
            child.restart_at = None
        self._signal_groups(signal.SIGTERM, self._running())
        deadline = time.monotonic() + self.stop_timeout
        while self._running() and time.monotonic() < deadline:
            time.sleep(0.1)
        late = self._running()
        for child in late:
            self.say(f"{child.name} did not stop within {self.stop_timeout:g} s; killing it.")
        self._signal_groups(signal.SIGKILL, late)
        for child in self.children:
            if child.process is not None:
                child.process.wait()


def describe_exit(returncode: int) -> str:
    """Say how a process ended: its exit status, or the signal that killed it."""
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def minutes(seconds: float) -> str:
    """Say a window of time in words: "5 minutes", "90 seconds"."""
    if seconds >= 120 and seconds % 60 == 0:
        return f"{seconds / 60:g} minutes"
    return f"{seconds:g} seconds"
