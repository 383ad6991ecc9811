"""The school a request or a task works in, for code that reads that school's settings.

Set by the middleware for each request (accounts.school_choice) and by tasks that work for one
school; None means every school (a trust role's "All schools") or none chosen yet.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_working: ContextVar[int | None] = ContextVar("working_school", default=None)


def working_school_id() -> int | None:
    """Return the id of the school being worked in, or None (every school, or none chosen)."""
    return _working.get()


def set_working_school(school_id: int | None):
    """Work in a school until reset with the returned token."""
    return _working.set(school_id)


def reset_working_school(token) -> None:
    """Go back to the school worked in before `set_working_school`."""
    _working.reset(token)


@contextmanager
def working_in(school_id: int | None) -> Iterator[None]:
    """Work in a school for the duration of a block (a task, a command, a test)."""
    token = _working.set(school_id)
    try:
        yield
    finally:
        _working.reset(token)
