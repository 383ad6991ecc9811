"""`make loadtest FAULTS=1`: the run's own Redis and PostgreSQL, and when each is taken away.

Redis is stopped (killed: what it held is gone) at a third of the run for REDIS_DOWN seconds
(at most a tenth of a shorter run), then started again empty. PostgreSQL is stopped (fast:
every session ended, as in a restart) at two thirds, for POSTGRES_DOWN seconds, then started
again. Each fault's window runs from the moment it starts until RECOVERY_GRACE seconds after
the service answers again, and says which errors a user may meet in it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.loadtest.browser import Recorder
from bench.loadtest.report import Fault, Window
from bench.throwaway import ThrowawayPostgres, ThrowawayRedis

REDIS_DOWN = 60.0
POSTGRES_DOWN = 5.0
RECOVERY_GRACE = 10.0
DATABASE = "portal_loadtest"


@dataclass
class Services:
    """This run's own Redis and PostgreSQL cluster, under the run's directory."""

    directory: Path
    redis: ThrowawayRedis = field(init=False)
    postgres: ThrowawayPostgres = field(init=False)

    def __post_init__(self) -> None:
        self.redis = ThrowawayRedis(self.directory / "redis")
        self.postgres = ThrowawayPostgres(self.directory / "postgres")

    @property
    def database_url(self) -> str:
        return self.postgres.url(DATABASE)

    @property
    def cache_url(self) -> str:
        return self.redis.url(0)

    def start(self) -> None:
        if ThrowawayPostgres.binaries() is None:
            raise SystemExit("PostgreSQL's server programs are missing (/usr/lib/postgresql)")
        self.redis.start()
        self.postgres.create()

    def stop(self) -> None:
        self.redis.stop()
        self.postgres.destroy()


@dataclass
class FaultPlan:
    """Takes Redis, then PostgreSQL, away during the run; records each fault's window."""

    services: Services
    recorder: Recorder
    seconds: float
    faults: list[Fault] = field(default_factory=list)
    finished: threading.Event = field(default_factory=threading.Event)

    def run(self, stop: threading.Event) -> None:
        try:
            redis_down = min(REDIS_DOWN, self.seconds / 10 if self.seconds < 600 else REDIS_DOWN)
            if self._wait_until(self.seconds / 3, stop):
                self._take_away(
                    "the Redis outage",
                    self.services.redis.stop,
                    self.services.redis.start,
                    redis_down,
                    allowed=(),
                )
            if self._wait_until(self.seconds * 2 / 3, stop):
                self._take_away(
                    "the PostgreSQL restart",
                    self.services.postgres.stop,
                    self.services.postgres.start,
                    POSTGRES_DOWN,
                    allowed=("HTTP 503",),
                )
        finally:
            self.finished.set()

    def _wait_until(self, moment: float, stop: threading.Event) -> bool:
        while self.recorder.now() < moment:
            if stop.wait(min(1.0, moment - self.recorder.now())):
                return False
        return True

    def _take_away(self, name: str, stop_it, start_it, down: float, allowed) -> None:
        started = self.recorder.now()
        stop_it()
        print(f"{started:.0f} s: {name}: stopped for {down:.0f} s", flush=True)
        time.sleep(down)
        start_it()
        back = self.recorder.now()
        print(f"{back:.0f} s: {name}: answering again", flush=True)
        self.faults.append(Fault(name, Window(started, back + RECOVERY_GRACE), tuple(allowed)))
