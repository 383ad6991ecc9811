"""When PostgreSQL blinks: say so, and wait for it.

A restart, a failover or a network hiccup takes the database away for seconds. No process of
the portal may die of it:

- a page answers 503 with Retry-After, in plain words (`database_unavailable_response`);
- a worker's loop or a sweep waits with backoff and goes on (`wait_for_database`).

Each process says once that the database stopped answering and once that it is back.
"""

import logging
import threading
import time
from collections.abc import Callable

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection
from django.http import HttpResponse
from django.template.loader import render_to_string

logger = logging.getLogger(__name__)

# The database's trouble rather than the data's: a connection refused, lost or closed, a
# server starting up, shutting down or out of connections; also a lock timeout or a deadlock,
# which trying again fixes as well. (IntegrityError and DataError are the data's: never held.)
DATABASE_TROUBLE = (OperationalError, InterfaceError)

FIRST_PAUSE = 0.25  # seconds before the first new try; doubled up to the cap


class _Outage:
    """This process's view of the database: answering, or silent since a moment."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.since: float | None = None

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
        logger.warning("The database answers again, after %.0f s.", seconds)


outage = _Outage()


def describe(error: BaseException) -> str:
    """Name a database error in one line (its class and first line: no query, no values)."""
    first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {first_line}" if first_line else type(error).__name__


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


# ---- The page while the database is away

RETRY_AFTER_SECONDS = 10


def database_unavailable_response(
    *, heading: str = "", message: str = "", retry_url: str = ""
) -> HttpResponse:
    """Return the 503 page of a database that does not answer, with Retry-After.

    Drawn without the request's context (its processors would ask the database again), from
    the template alone, like the 500 page. `heading` and `message` replace the general words;
    `retry_url` (the page asked for, on a GET) gets a "Try again" link.
    """
    page = render_to_string(
        "database_unavailable.html",
        {"heading": heading, "message": message, "retry_url": retry_url},
    )
    response = HttpResponse(page, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response
