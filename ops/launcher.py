"""Start several processes side by side and stop them all together (`manage.py serve`)."""

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


class Launcher:
    """Run children in their own process groups; stop them all on a signal or a death.

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
        say: Callable[[str], None] = print,
    ) -> None:
        self.children = list(children)
        self.cwd = cwd
        self.env = env
        self.stop_timeout = stop_timeout
        self.say = say
        self.signals_received = 0

    def run(self) -> int:
        """Start every child and supervise them; return the exit status for the launcher."""
        # SIGHUP too: a closed terminal must not leave the children running in their groups.
        stop_signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        previous = {sig: signal.signal(sig, self._on_signal) for sig in stop_signals}
        try:
            for child in self.children:
                if self.signals_received:
                    break
                try:
                    child.process = subprocess.Popen(  # noqa: S603 (our own command lines)
                        list(child.args), cwd=self.cwd, env=self.env, process_group=0
                    )
                except OSError as error:
                    self.say(f"{child.name} could not start ({error}); stopping the others.")
                    self._stop_all()
                    return 1
            dead = self._wait_for_signal_or_death()
            if dead is not None:
                self.say(
                    f"{dead.name} stopped by itself (exit status {dead.process.returncode}); "
                    "stopping the others."
                )
            else:
                self.say("Stopping the web server, the workers and the sweeps.")
            self._stop_all()
            return 0 if dead is None else 1
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _on_signal(self, signum: int, frame: object) -> None:
        self.signals_received += 1
        if self.signals_received > 1:
            # The operator asked twice: no more waiting for graceful ends.
            self._signal_groups(signal.SIGKILL, self._running())

    def _running(self) -> list[Child]:
        return [c for c in self.children if c.process is not None and c.process.poll() is None]

    def _wait_for_signal_or_death(self) -> Child | None:
        while not self.signals_received:
            for child in self.children:
                if child.process is not None and child.process.poll() is not None:
                    return child
            time.sleep(0.2)
        return None

    def _signal_groups(self, sig: int, children: list[Child]) -> None:
        # Only children not yet reaped: a reaped leader's pid (its group's id) may be reused.
        for child in children:
            with contextlib.suppress(ProcessLookupError):  # the whole group is gone already
                os.killpg(child.process.pid, sig)

    def _stop_all(self) -> None:
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
