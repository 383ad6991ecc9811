"""Time staff pages through Django's test client and explain the SQL they run (scale checks)."""

import statistics
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import connection, reset_queries
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts.access import STAFF_GROUP
from accounts.models import StaffRole
from accounts.services import staff_role_set

# The pages item 6 of issue 5 measures, by label; learner-list labels come first.
STAFF_PAGES: dict[str, str] = {
    "list, page 1": "/learners/",
    "list, page 2000": "/learners/?page=2000",
    "search, common surname": "/learners/?q=Khan",
    "search, partial username": "/learners/?q=ira.kh",
    "level filter": "/learners/?level=LOA_PARTNER_LEVEL2",
    "search + level filter": "/learners/?q=Smith&level=LOA_PARTNER_LEVEL1",
    "dashboard": "/dashboard/",
    "follow-up queue": "/follow-ups/",
}


@dataclass
class PageTiming:
    """How long one page took over repeated requests, and the SQL it ran."""

    label: str
    url: str
    status: int
    milliseconds: list[float]
    queries: list[str] = field(default_factory=list)

    @property
    def p50(self) -> float:
        return statistics.median(self.milliseconds)

    @property
    def p95(self) -> float:
        ordered = sorted(self.milliseconds)
        return ordered[max(0, round(0.95 * len(ordered)) - 1)]


def timing_staff_user(username: str = "timing.staff") -> AbstractBaseUser:
    """Return a staff member to sign in as (created without a usable password if missing)."""
    user, created = get_user_model().objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    user.groups.add(Group.objects.get_or_create(name=STAFF_GROUP)[0])
    # A safeguarding lead sees every learner and result: the pages at their heaviest.
    staff_role_set(user=user, role=StaffRole.DSL)
    return user


def pages_time(
    pages: dict[str, str], *, user: AbstractBaseUser, runs: int = 50, warmup: int = 2
) -> list[PageTiming]:
    """Request each page `runs` times as `user`; return timings and the SQL of one request."""
    client = Client()
    client.force_login(user)
    timings = []
    for label, url in pages.items():
        for _ in range(warmup):
            client.get(url)
        # With DEBUG on, the query log is capped: a full one would make the capture empty.
        reset_queries()
        with CaptureQueriesContext(connection) as captured:
            response = client.get(url)
        elapsed = []
        for _ in range(runs):
            started = time.perf_counter()
            client.get(url)
            elapsed.append((time.perf_counter() - started) * 1000)
        queries = [query["sql"] for query in captured.captured_queries]
        timings.append(PageTiming(label, url, response.status_code, elapsed, queries))
    return timings


# Plan details that do not say which index a node used, how many rows or how long it took.
EXPLAIN_NOISE = ("Buffers:", "Planning:", "Batches:", "Buckets:", "Cache Key:", "Cache Mode:",
                 "Hits:", "Sort Method:", "Worker ")  # fmt: skip


def query_explain(sql: str) -> str:
    """Return PostgreSQL's EXPLAIN (ANALYZE, BUFFERS) of a read, trimmed to nodes and times."""
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")
        lines = [row[0] for row in cursor.fetchall()]
    kept = [line for line in lines if not line.strip().startswith(EXPLAIN_NOISE)]
    return "\n".join(kept)


def timings_markdown(timings: Iterable[PageTiming], *, explain: bool) -> str:
    """Return a Markdown table of p50/p95, and each page's queries with their plans."""
    timings = list(timings)
    lines = [
        "| page | URL | status | queries | p50 ms | p95 ms |",
        "|---|---|---|---|---|---|",
    ]
    for timing in timings:
        lines.append(
            f"| {timing.label} | `{timing.url}` | {timing.status} | {len(timing.queries)} "
            f"| {timing.p50:.1f} | {timing.p95:.1f} |"
        )
    if explain and connection.vendor == "postgresql":
        for timing in timings:
            lines += ["", f"### {timing.label}: `{timing.url}`", ""]
            for number, sql in enumerate(timing.queries, start=1):
                if not sql.lstrip().upper().startswith("SELECT"):
                    continue
                shown = sql if len(sql) <= 600 else sql[:600] + " …"
                lines += [f"{number}. `{shown}`", "", "```", query_explain(sql), "```", ""]
    return "\n".join(lines) + "\n"
