"""One log line per request, tied to everything it causes by a request id.

The outermost middleware: it takes a trusted proxy's X-Request-ID or makes an id
(ops.request_context), returns it in the response's X-Request-ID, and logs the method, the
route pattern (never the ids in the path), the status, the time taken, the CPU time its
thread spent and the database queries it made (what a request costs, for sizing:
bench/README.md), and the role (never a username) on the logger `portal.requests`; it counts
the same in ops.metrics. Every line logged meanwhile (upstream calls, a 500's traceback, tasks
run at once) carries the same id.
"""

import logging
import time

from django.db import connection
from django.http import HttpRequest, HttpResponse

from accounts.access import learner_account, staff_role
from ops import metrics
from ops.request_context import bound_request_id, request_id_for

logger = logging.getLogger("portal.requests")

UNMATCHED = "<unmatched>"  # one label for every unknown path: scanners must not invent routes
ANONYMOUS = "anonymous"


class RequestLogMiddleware:
    """Give each request an id, then log and count it once answered."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_for(request)
        request.request_id = request_id
        started = time.perf_counter()
        request.cpu_started = time.thread_time()
        request.queries = _QueryCount()
        metrics.REQUESTS_IN_PROGRESS.inc()
        try:
            with bound_request_id(request_id), connection.execute_wrapper(request.queries):
                try:
                    response = self.get_response(request)
                except Exception:
                    # Django's own error handling failed too (an error page that raised): the
                    # server answers a bare 500, and the request is still logged and counted.
                    self._answered(request, HttpResponse(status=500), started)
                    raise
                self._answered(request, response, started)
        finally:
            metrics.REQUESTS_IN_PROGRESS.dec()
        response["X-Request-ID"] = request_id
        return response

    def _answered(self, request: HttpRequest, response: HttpResponse, started: float) -> None:
        """Count the answered request, and log it unless it is a probe that went well."""
        seconds = time.perf_counter() - started
        route = route_of(request)
        metrics.observe_request(route, request.method or "", response.status_code, seconds)
        if not (getattr(request, "probe", False) and response.status_code < 400):
            self._log(request, response, route, seconds)

    def _log(
        self, request: HttpRequest, response: HttpResponse, route: str, seconds: float
    ) -> None:
        status = response.status_code
        role = role_of(request)
        duration_ms = round(seconds * 1000, 1)
        cpu_ms = round((time.thread_time() - request.cpu_started) * 1000, 1)
        queries = request.queries.count
        logger.log(
            logging.WARNING if status >= 500 else logging.INFO,
            "%s %s %s %.1f ms (cpu %.1f ms, %d queries) role=%s",
            request.method,
            route,
            status,
            duration_ms,
            cpu_ms,
            queries,
            role,
            extra={
                "method": request.method,
                "route": route,
                "status": status,
                "duration_ms": duration_ms,
                "cpu_ms": cpu_ms,
                "queries": queries,
                "role": role,
            },
        )


class _QueryCount:
    """Counts the queries a request sends to the database (a connection execute wrapper)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, execute, sql, params, many, context):
        self.count += 1
        return execute(sql, params, many, context)


def route_of(request: HttpRequest) -> str:
    """Return the URL pattern the request matched ("/learners/<int:pk>/"), never its path."""
    probe = getattr(request, "probe", None)
    if probe:
        return probe
    match = getattr(request, "resolver_match", None)
    if match is None or match.route is None:
        return UNMATCHED
    return "/" + match.route


def role_of(request: HttpRequest) -> str:
    """Name the role of whoever made the request: anonymous, learner, teacher, admin, dsl..."""
    user = getattr(request, "user", None)
    try:
        if user is None or not user.is_authenticated:
            return ANONYMOUS
        role = staff_role(user)
        if role is not None:
            return str(role)
        return "learner" if learner_account(user) is not None else "other"
    except Exception:  # the database that failed the request fails this too
        return "unknown"
