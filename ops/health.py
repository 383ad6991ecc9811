"""Liveness and readiness for load balancers: /healthz and /readyz (small JSON, no secrets).

/healthz says only that the process answers (no database). /readyz checks what a page needs:
the database answers, the cache answers, every migration is applied. With Redis down the cache
answers from the database: /readyz then says "degraded" and stays 200. It also reports the
upstream circuit and the work waiting (deliveries, imports) but never fails on them: with the
upstream down every web process would be taken out of the load balancer at once, which helps
nobody (learners' answers are still saved and wait to be sent). Those are for alerts, through
the same figures on /metrics.

Apps above the portal report their work through register_work_queue (their AppConfig.ready).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, JsonResponse

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkQueue:
    """Work an app has waiting: how much, how long the oldest has waited, how much is running."""

    waiting: int
    oldest_waiting_seconds: float | None
    running: int | None = None


WorkQueueReader = Callable[[], WorkQueue]
SchoolWorkQueueReader = Callable[[], dict[int, WorkQueue]]
_work_queues: dict[str, WorkQueueReader] = {}
_school_work_queues: dict[str, SchoolWorkQueueReader] = {}


def register_work_queue(
    name: str, reader: WorkQueueReader, *, by_school: SchoolWorkQueueReader | None = None
) -> None:
    """Report `reader()` as the work queue `name` on /readyz and /metrics (cheap queries only).

    `by_school()` reads a queue of schools' work per school (by school id, schools with none
    left out): /metrics shows it so when the partner has several schools.
    """
    _work_queues[name] = reader
    if by_school is not None:
        _school_work_queues[name] = by_school


def work_queues() -> dict[str, WorkQueue]:
    """Read every registered work queue now."""
    return {name: reader() for name, reader in sorted(_work_queues.items())}


def work_queues_by_school() -> dict[str, dict[int, WorkQueue]]:
    """Read every work queue registered with figures per school, by school id."""
    return {name: reader() for name, reader in sorted(_school_work_queues.items())}


def waited_seconds(oldest: datetime | None, now: datetime) -> float | None:
    """Return how long the oldest item has waited, or None when none waits."""
    return max((now - oldest).total_seconds(), 0.0) if oldest else None


def healthz(request: HttpRequest) -> JsonResponse:
    """Say the process answers; touch nothing else."""
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> JsonResponse:
    """Say whether this process can serve pages, and what else an operator should know."""
    checks = {"database": _check(database_answers), "cache": _cache_check()}
    checks["migrations"] = _check(migrations_applied) if checks["database"] == "ok" else "unknown"
    ready = all(result in ("ok", DEGRADED) for result in checks.values())
    status = "not ready" if not ready else DEGRADED if DEGRADED in checks.values() else "ready"
    body: dict[str, object] = {"status": status, "checks": checks}
    body["upstream"] = {"circuit": _circuit_state()}
    if checks["database"] == "ok":
        try:
            body["work"] = {
                name: {
                    "waiting": queue.waiting,
                    "oldest_waiting_seconds": _rounded(queue.oldest_waiting_seconds),
                    **({"running": queue.running} if queue.running is not None else {}),
                }
                for name, queue in work_queues().items()
            }
        except Exception as exc:
            logger.warning("readiness: work queues unreadable (%s)", type(exc).__name__)
    response = JsonResponse(body, status=200 if ready else 503)
    response["Cache-Control"] = "no-store"
    return response


def _check(check: Callable[[], bool]) -> str:
    """Run one check: "ok", or "failing" (logged by kind only: messages may name hosts)."""
    try:
        return "ok" if check() else "failing"
    except Exception as exc:
        logger.warning("readiness: %s failed (%s)", check.__name__, type(exc).__name__)
        return "failing"


# Redis is not answering and the database stands in for it (ops/cache.py): pages still work,
# so the process stays in the load balancer; an operator should look.
DEGRADED = "degraded"


def _cache_check() -> str:
    """Say "ok", "degraded" (Redis down, the database standing in) or "failing"."""
    redis_answers = getattr(cache, "redis_answers", None)
    if redis_answers is None or redis_answers():
        return _check(cache_answers)
    return DEGRADED if _check(cache_answers) == "ok" else "failing"


def database_answers() -> bool:
    """Run the cheapest query there is."""
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT 1")
        return cursor.fetchone() == (1,)


def cache_answers() -> bool:
    """Write and read back a key of this process (a shared cache answers for everyone)."""
    key = f"portal.readyz:{os.getpid()}:{threading.get_ident()}"
    value = str(time.monotonic())
    cache.set(key, value, timeout=10)
    return cache.get(key) == value


# Planning migrations reads every migration file (tens of milliseconds): once applied, they
# stay applied for the life of the process, so a yes is kept for READYZ_MIGRATIONS_CACHE_SECONDS
# (a process started before a newer release's migrate keeps saying yes that long).
_migrations_checked_at: float | None = None
_migrations_lock = threading.Lock()


def migrations_applied() -> bool:
    """Say whether every migration on disk is applied (a yes is remembered for a while)."""
    global _migrations_checked_at
    now = time.monotonic()
    keep = settings.READYZ_MIGRATIONS_CACHE_SECONDS
    checked_at = _migrations_checked_at
    if checked_at is not None and now - checked_at < keep:
        return True
    with _migrations_lock:
        executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
        _migrations_checked_at = None if pending else now
    return not pending


def forget_migrations_check() -> None:
    """Check the migrations again at the next /readyz (tests; after a migrate in process)."""
    global _migrations_checked_at
    _migrations_checked_at = None


def _circuit_state() -> str:
    """Say "closed" or "open" as far as any process knows (never fails readiness)."""
    from partner_api.upstream import upstream_available

    try:
        return "closed" if upstream_available() else "open"
    except Exception as exc:
        logger.warning("readiness: circuit state unreadable (%s)", type(exc).__name__)
        return "unknown"


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 1)
