"""The id of the request (or queued task) under way, carried to every log line it causes.

A request gets an id as it arrives (ops.request_log), taken from a trusted proxy's
`X-Request-ID` or made here; a task queued while it runs carries the id to the worker
(carries_request_id), so the worker's lines for that task name the same id. The id lives in a
context variable: each thread (gunicorn's threaded workers) and each task sees its own.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from typing import Any, TypeVar

from django.conf import settings
from django.http import HttpRequest

from kit.addresses import address_in_networks, networks_parse

_request_id: ContextVar[str | None] = ContextVar("portal_request_id", default=None)

# What a proxy's id may look like: printable, no spaces, short. Anything else (a line break
# smuggled into the logs, a kilobyte of text) is replaced by an id of our own.
VALID_REQUEST_ID = re.compile(r"[A-Za-z0-9._:=+/@-]{1,128}")
REQUEST_ID_HEADER = "HTTP_X_REQUEST_ID"
# The keyword argument a task carrying a request id receives it under.
TASK_REQUEST_ID_KWARG = "request_id"

_F = TypeVar("_F", bound=Callable[..., Any])


def current_request_id() -> str | None:
    """Return the id of the request or task under way in this context, if any."""
    return _request_id.get()


def new_request_id() -> str:
    """Make a fresh request id (32 hex digits, as nginx's $request_id)."""
    return uuid.uuid4().hex


@contextmanager
def bound_request_id(request_id: str | None) -> Iterator[str | None]:
    """Make `request_id` the current one until the block ends."""
    token = _request_id.set(request_id)
    try:
        yield request_id
    finally:
        _request_id.reset(token)


def request_id_for(request: HttpRequest) -> str:
    """Return the proxy's X-Request-ID if a trusted proxy sent a valid one, else a new id."""
    sent = request.META.get(REQUEST_ID_HEADER, "")
    if sent and VALID_REQUEST_ID.fullmatch(sent) and _from_trusted_proxy(request):
        return sent
    return new_request_id()


def _from_trusted_proxy(request: HttpRequest) -> bool:
    """Whether the request's nearest peer is one of REQUEST_ID_TRUSTED_PROXIES."""
    trusted = settings.REQUEST_ID_TRUSTED_PROXIES
    if not trusted:
        return False
    # The peer itself, never X-Forwarded-For: a client must not vouch for its own header.
    return address_in_networks(request.META.get("REMOTE_ADDR"), _networks(tuple(trusted)))


_parsed: dict[tuple[str, ...], list] = {}


def _networks(ranges: tuple[str, ...]) -> list:
    """Parse the trusted ranges once per value of the setting."""
    if ranges not in _parsed:
        _parsed[ranges] = networks_parse(",".join(ranges))
    return _parsed[ranges]


class RequestIdLogFilter(logging.Filter):
    """Add `request_id` (or "-") to every record a handler emits."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = current_request_id() or "-"
        return True


def carries_request_id(function: _F) -> _F:
    """Let a task function run under the id of the request that queued it.

    Put it under `@task()`. ops.tasks.enqueue_when passes the current id as the keyword
    argument `request_id`; the function itself never sees it.
    """

    @wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        request_id = kwargs.pop(TASK_REQUEST_ID_KWARG, None)
        if not (isinstance(request_id, str) and VALID_REQUEST_ID.fullmatch(request_id)):
            request_id = current_request_id()  # queued outside a request: a sweep, a shell
        with bound_request_id(request_id):
            return function(*args, **kwargs)

    wrapper.carries_request_id = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def task_kwargs_with_request_id(chosen_task: Any) -> dict[str, str]:
    """Return the keyword arguments that carry the current id into a task, if it takes one."""
    request_id = current_request_id()
    if request_id is None or not getattr(chosen_task.func, "carries_request_id", False):
        return {}
    return {TASK_REQUEST_ID_KWARG: request_id}
