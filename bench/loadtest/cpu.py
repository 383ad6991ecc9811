"""CPU seconds spent by the run's processes, read from /proc while the load runs.

Also the highest of a few readings taken at the same time (the database connections open).

Each portal process is the leader of a session of its own (cluster.Cluster), so every process
of a gunicorn instance (master and workers, restarted ones included) shares its process group.
A sampler thread reads /proc/<pid>/stat every second and keeps each process's latest user and
system time; a process killed half-way keeps what was last read of it (at most a second
short). What a process had spent before the load started (its start-up) is not counted.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def _processes() -> dict[int, tuple[int, str, float]]:
    """Return pid -> (process group, command name, CPU seconds) for every readable process."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        name = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        # After the name: state ppid pgrp session ... utime (14th field) stime (15th).
        found[int(entry.name)] = (int(fields[2]), name, (int(fields[11]) + int(fields[12])) / TICKS)
    return found


class CpuSampler:
    """Adds up the CPU of processes by role while the load runs.

    `roles` maps a role to a test of (process group, command name), called for each process.
    """

    def __init__(
        self,
        roles: dict[str, Callable[[int, str], bool]],
        gauges: dict[str, Callable[[], int]] | None = None,
        every: float = 1.0,
    ) -> None:
        self.roles = roles
        self.gauges = gauges or {}  # name -> a reading whose highest value is kept
        self.highest: dict[str, int] = {}
        self.every = every
        self._baseline: dict[int, float] = {}
        self._latest: dict[int, tuple[str, float]] = {}
        self.load_averages: tuple[float, float, float] = (0.0, 0.0, 0.0)  # start, highest, end
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu", daemon=True)

    def start(self) -> None:
        now = os.getloadavg()[0]
        self.load_averages = (now, now, now)
        for pid, (_, _, seconds) in _processes().items():
            self._baseline[pid] = seconds
        self._sample()
        self._thread.start()

    def stop(self) -> dict[str, float]:
        """Stop sampling; return CPU seconds by role since start()."""
        self._stop.set()
        self._thread.join()
        self._sample()
        start, highest, _ = self.load_averages
        self.load_averages = (start, highest, os.getloadavg()[0])
        totals = dict.fromkeys(self.roles, 0.0)
        for pid, (role, seconds) in self._latest.items():
            totals[role] += seconds - self._baseline.get(pid, 0.0)
        return totals

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._sample()

    def _sample(self) -> None:
        for gauge, read in self.gauges.items():
            try:
                self.highest[gauge] = max(self.highest.get(gauge, 0), read())
            except Exception:  # noqa: S112 (a reading missed while the database restarts)
                continue
        start, highest, end = self.load_averages
        self.load_averages = (start, max(highest, os.getloadavg()[0]), end)
        for pid, (group, name, seconds) in _processes().items():
            for role, matches in self.roles.items():
                if matches(group, name):
                    self._latest[pid] = (role, seconds)
                    break
