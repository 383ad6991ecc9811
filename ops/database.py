"""When PostgreSQL blinks: say so, wait for it, and keep what the upstream answered meanwhile.

A restart, a failover or a network hiccup takes the database away for seconds. No process of
the portal may die of it, and none may forget what the upstream told it meanwhile:

- a page answers 503 with Retry-After, in plain words (`database_unavailable_response`);
- a worker's loop or a sweep waits with backoff and goes on (`wait_for_database`);
- a write that records an upstream's answer (a registration, a submission, results) is held
  in memory and tried again until the database answers (`write_when_database_returns`), for
  DATABASE_OUTAGE_HOLD seconds in a worker and DATABASE_OUTAGE_HOLD_IN_REQUEST in a web request.

Each process says once that the database stopped answering and once that it is back.
"""

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import TypeVar

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection
from django.http import HttpResponse
from django.template.loader import render_to_string
from django.utils import timezone

logger = logging.getLogger(__name__)

# The database's trouble rather than the data's: a connection refused, lost or closed, a
# server starting up, shutting down or out of connections; also a lock timeout or a deadlock,
# which trying again fixes as well. (IntegrityError and DataError are the data's: never held.)
DATABASE_TROUBLE = (OperationalError, InterfaceError)

FIRST_PAUSE = 0.25  # seconds before the first new try; doubled up to the cap

T = TypeVar("T")


class _Outage:
    """This process's view of the database: answering, or silent since a moment."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.since: float | None = None
        # When this process last saw the database answer again (wall clock), or None.
        self.last_ended: datetime | None = None

    def began(self, error: BaseException, meanwhile: str) -> None:
        """Note that the database stopped answering, and what happens meanwhile; log it once."""
        with self._lock:
            if self.since is not None:
                return
            self.since = time.monotonic()
        logger.warning("The database does not answer (%s); %s.", describe(error), meanwhile)

    def ended(self) -> None:
        """Note that the database answers again; log it once, with how long it was away."""
        with self._lock:
            if self.since is None:
                return
            seconds, self.since = time.monotonic() - self.since, None
            self.last_ended = timezone.now()
        logger.warning("The database answers again, after %.0f s.", seconds)


outage = _Outage()
_process_hold: float | None = None


def describe(error: BaseException) -> str:
    """Name a database error in one line (its class and first line: no query, no values)."""
    first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {first_line}" if first_line else type(error).__name__


def hold_answers_for(seconds: float) -> None:
    """Make this process hold upstream answers this long (a worker: DATABASE_OUTAGE_HOLD)."""
    global _process_hold
    _process_hold = seconds


def hold_seconds() -> float:
    """Return how long this process holds an answer: a worker's hold, else a web request's."""
    if _process_hold is not None:
        return _process_hold
    return settings.DATABASE_OUTAGE_HOLD_IN_REQUEST


def drop_connection() -> None:
    """Close this thread's connection, broken or not: the next query opens a new one."""
    try:
        connection.close()
    except DATABASE_TROUBLE:
        connection.connection = None  # closing a broken connection may fail: forget it


def wait_for_database(
    error: BaseException,
    *,
    who: str,
    deadline: float | None = None,
    go_on: Callable[[], bool] = lambda: True,
) -> bool:
    """Wait, with capped backoff, until the database answers; False at the deadline.

    `error` is what showed the database gone; `who` names the waiting process in the log line
    ("the delivery worker"). `go_on` is asked before each pause: False ends the wait early
    (a worker told to stop).
    """
    outage.began(error, f"{who} waits for it and goes on when it is back")
    pause = FIRST_PAUSE
    while True:
        drop_connection()
        if not go_on() or (deadline is not None and time.monotonic() + pause > deadline):
            return False
        time.sleep(pause)
        try:
            connection.ensure_connection()
        except DATABASE_TROUBLE:
            pause = min(pause * 2, settings.DATABASE_RETRY_BACKOFF_CAP)
            continue
        outage.ended()
        return True


def write_when_database_returns(write: Callable[[], T], *, what: str) -> T:
    """Run a write that records an upstream's answer, holding it through a database outage.

    When the database does not answer, the write waits in memory and is tried again with
    backoff until it does, for this process's hold (hold_seconds); after that the database's
    error is raised, and the answer is lost with it. `what` names the answer in log lines, by
    ids only. The write must be safe to run twice: a commit whose reply was lost may have
    happened. Inside a transaction nothing can be tried again, so it then runs once.
    """
    if connection.in_atomic_block:
        return write()
    deadline = None
    while True:
        try:
            written = write()
        except DATABASE_TROUBLE as error:
            if deadline is None:
                hold = hold_seconds()
                deadline = time.monotonic() + hold
                logger.warning(
                    "Holding %s until the database answers (at most %.0f s).", what, hold
                )
            if not wait_for_database(error, who=f"the process holding {what}", deadline=deadline):
                logger.error(
                    "Gave up holding %s: the database did not answer in time; it is lost.", what
                )
                raise
            continue
        if deadline is not None:
            logger.warning("Wrote %s, held through the database's absence.", what)
        return written


def database_back_since() -> datetime | None:
    """Return when the database last came back: the later of the PostgreSQL server's start
    and the end of the last outage this process saw (a failover or a network cut leaves the
    server's start as it was); None if neither is known (SQLite, and no outage seen)."""
    started = None
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_postmaster_start_time()")
            started = cursor.fetchone()[0]
    known = [moment for moment in (started, outage.last_ended) if moment is not None]
    return max(known) if known else None


# ---- The page while the database is away

RETRY_AFTER_SECONDS = 10


def database_unavailable_response(
    *, heading: str = "", message: str = "", retry_url: str = "", words: dict | None = None
) -> HttpResponse:
    """Return the 503 page of a database that does not answer, with Retry-After.

    Drawn without the request's context (its processors would ask the database again), from
    the template alone, like the 500 page. `heading` and `message` replace the general words;
    `retry_url` (the page asked for, on a GET) gets a "Try again" link; `words` chooses the
    reader's words (a learner's `learner_wording`), worked out without the database.
    """
    page = render_to_string(
        "database_unavailable.html",
        {"heading": heading, "message": message, "retry_url": retry_url, **(words or {})},
    )
    response = HttpResponse(page, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response
