"""Prometheus metrics on /metrics: off (404) unless METRICS_TOKEN or METRICS_ALLOWED_IPS is set.

Counted as things happen: request latency by route, method and status class; upstream calls
by endpoint and outcome with their latency (a client call listener); sign-in failures (Django's
user_login_failed) and locks (accounts.signals.sign_in_lock_set). Read from the database when
scraped: the upstream circuit, the work queues of ops.health (deliveries waiting and the
oldest one's age, imports running), per school when the partner has several.

Under gunicorn each worker process counts on its own: with PROMETHEUS_MULTIPROC_DIR set (an
empty directory, cleared before the server starts) every process writes its figures there and
a scrape adds them up; the server's child_exit hook must call gunicorn_child_exit.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse, HttpResponseNotFound
from django.utils.crypto import constant_time_compare
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric

from accounts.signals import sign_in_lock_set
from kit.addresses import address_in_networks, networks_parse
from ops.health import WorkQueue, work_queues, work_queues_by_school
from partner_api import (
    CallRecord,
    PartnerApiBadResponse,
    PartnerApiCircuitOpen,
    PartnerApiRejected,
    PartnerApiServerError,
    PartnerApiUnavailable,
)
from schools.models import School, several_schools

MULTIPROC_DIR_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
# A `_created` timestamp beside every series doubles the output and no dashboard here reads it.
disable_created_metrics()
# Pages answer in tens of milliseconds; those waiting on the upstream take up to seconds.
LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
# Any other method is counted as "other": a client must not be able to invent label values.
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

REQUEST_SECONDS = Histogram(
    "portal_request_duration_seconds",
    "Time to answer a request, by route pattern, method and status class.",
    ["route", "method", "status"],
    buckets=LATENCY_BUCKETS,
)
REQUESTS_IN_PROGRESS = Gauge(
    "portal_requests_in_progress",
    "Requests being answered now (summed over the live processes).",
    multiprocess_mode="livesum",
)
UPSTREAM_CALL_SECONDS = Histogram(
    "portal_upstream_call_duration_seconds",
    "Partner API call attempts, by endpoint and outcome, with their latency.",
    ["endpoint", "outcome"],
    buckets=LATENCY_BUCKETS,
)
SIGN_IN_FAILURES = Counter("portal_sign_in_failures", "Failed or refused sign-ins.")
SIGN_IN_LOCKS = Counter(
    "portal_sign_in_locks",
    "Sign-in locks set, by scope (account, account_address, address, card, card_device, "
    "card_address).",
    ["scope"],
)  # fmt: skip


def observe_request(route: str, method: str, status: int, seconds: float) -> None:
    """Count one answered request."""
    method = method if method in KNOWN_METHODS else "other"
    REQUEST_SECONDS.labels(route, method, f"{status // 100}xx").observe(seconds)


def observe_upstream_call(record: CallRecord) -> None:
    """Count one upstream call attempt (a client call listener)."""
    UPSTREAM_CALL_SECONDS.labels(record.endpoint, call_outcome(record)).observe(
        record.latency_ms / 1000
    )


def call_outcome(record: CallRecord) -> str:
    """Name how an attempt ended, from a short fixed list (statuses and reasons would sprawl)."""
    error = record.error
    if record.ok:
        return "ok"
    if record.expected:
        return "not_ready"  # results asked for before they exist: an answer, not a failure
    if isinstance(error, PartnerApiCircuitOpen):
        return "circuit_open"
    if isinstance(error, PartnerApiUnavailable):
        return "unavailable"
    if isinstance(error, PartnerApiRejected):
        return "rejected"
    if isinstance(error, PartnerApiServerError):
        return "server_error"
    if isinstance(error, PartnerApiBadResponse):
        return "bad_response"
    return "error"


@receiver(user_login_failed)
def _count_sign_in_failure(**kwargs: object) -> None:
    SIGN_IN_FAILURES.inc()


@receiver(sign_in_lock_set)
def _count_sign_in_lock(*, scope: str, **kwargs: object) -> None:
    SIGN_IN_LOCKS.labels(scope).inc()


class StateCollector:
    """Figures read when scraped: the upstream circuit and the registered work queues."""

    def describe(self) -> list[Metric]:
        return []  # registering must not query the database

    def collect(self) -> Iterator[Metric]:
        from partner_api.upstream import upstream_available

        circuit = GaugeMetricFamily(
            "portal_upstream_circuit_open",
            "1 while calls to the upstream fail fast (as far as any process knows), else 0.",
        )
        circuit.add_metric([], 0.0 if upstream_available() else 1.0)
        yield circuit
        yield from work_queue_metrics()


def work_queue_metrics() -> tuple[Metric, Metric, Metric]:
    """Return the work queues' figures: by queue, and by school too when there are several.

    A one-school partner's series carry the queue alone, as they always have; with several
    schools each queue of schools' work has one series per school (its code), so that a
    school's stuck import or deliveries show as that school's.
    """
    by_school = several_schools()
    labels = ["queue", "school"] if by_school else ["queue"]
    waiting = GaugeMetricFamily("portal_work_waiting", "Items waiting, by queue.", labels=labels)
    oldest = GaugeMetricFamily(
        "portal_work_oldest_waiting_seconds",
        "How long the oldest waiting item has waited (0 when none waits), by queue.",
        labels=labels,
    )
    running = GaugeMetricFamily(
        "portal_work_running", "Items being worked on, by queue.", labels=labels
    )
    per_school = work_queues_by_school() if by_school else {}
    schools = School.everyone() if by_school else []
    for name, queue in work_queues().items():
        if name in per_school:
            # Every school, those with nothing waiting at 0: a series never goes missing.
            idle = WorkQueue(0, None, None if queue.running is None else 0)
            rows = [([name, s.code], per_school[name].get(s.pk, idle)) for s in schools]
        else:
            rows = [([name, ""] if by_school else [name], queue)]  # no school's own work
        for values, figures in rows:
            waiting.add_metric(values, figures.waiting)
            oldest.add_metric(values, figures.oldest_waiting_seconds or 0.0)
            if figures.running is not None:
                running.add_metric(values, figures.running)
    return waiting, oldest, running


_state_collector = StateCollector()
REGISTRY.register(_state_collector)


def multiprocess_mode() -> bool:
    """Whether this process writes its figures for a scrape by any process to add up."""
    return bool(os.environ.get(MULTIPROC_DIR_VARIABLE))


def scrape() -> bytes:
    """Return every metric in Prometheus's text format."""
    if multiprocess_mode():
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        registry.register(_state_collector)
        return generate_latest(registry)
    return generate_latest(REGISTRY)


def metrics_allowed(request: HttpRequest) -> bool:
    """Whether the request brings the token or comes from an allowed address."""
    token = settings.METRICS_TOKEN
    if token:
        scheme, _, sent = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
        if scheme.lower() == "bearer" and constant_time_compare(sent.strip(), token):
            return True
    allowed = settings.METRICS_ALLOWED_IPS
    if allowed and not any(header in request.META for header in PROXY_HEADERS):
        # The scraper's own connection only: behind a proxy on the same machine every visitor
        # arrives from 127.0.0.1, and a forwarded address is whatever the client wrote.
        networks = networks_parse(",".join(allowed))
        if address_in_networks(request.META.get("REMOTE_ADDR"), networks):
            return True
    return False


# A request carrying one of these came through a proxy: only the token opens /metrics to it.
PROXY_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP")


def metrics_view(request: HttpRequest) -> HttpResponse:
    """Serve the metrics to a holder of the token or an allowed address; 404 to anyone else.

    A 404, not a 403, also for a wrong token: the page is not there for whoever may not read it.
    """
    if not metrics_allowed(request):
        return HttpResponseNotFound("Not found", content_type="text/plain")
    response = HttpResponse(scrape(), content_type=CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response


def gunicorn_child_exit(server: object, worker: object) -> None:
    """Gunicorn's child_exit hook: drop a dead worker's live gauges from the sums."""
    if multiprocess_mode():
        multiprocess.mark_process_dead(worker.pid)  # type: ignore[attr-defined]
