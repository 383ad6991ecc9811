"""The load test's figures, from recorded requests and the sandbox's report: no I/O here.

Everything the table says is computed by these functions from plain data (samples, the
learners' saved answers, the sandbox's submissions report), so they can be tested alone.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bench.support import percentile

# What a page waits on decides its target: the upstream answers in 150 ms at best, and a
# password check is PBKDF2 on purpose.
UPSTREAM_PAGES = ("start (upstream)", "send answers (upstream)")
PASSWORD_PAGES = ("sign in (password check)",)
TARGET_LOCAL_P95 = 0.5
TARGET_UPSTREAM_P95 = 1.0
TARGET_PASSWORD_P95 = 1.0

_PAGES: tuple[tuple[str | None, re.Pattern[str], str], ...] = (
    ("GET", re.compile(r"/accounts/login/"), "sign-in page"),
    ("POST", re.compile(r"/accounts/login/"), "sign in (password check)"),
    (None, re.compile(r"/"), "home (redirect)"),
    (None, re.compile(r"/me/"), "my assessments"),
    ("POST", re.compile(r"/me/start/"), "start (upstream)"),
    (None, re.compile(r"/me/assessments/\d+/"), "take (redirect)"),
    ("GET", re.compile(r"/me/assessments/\d+/page/\d+/"), "question page"),
    ("POST", re.compile(r"/me/assessments/\d+/page/\d+/"), "save page"),
    ("POST", re.compile(r"/me/assessments/\d+/answers/"), "autosave answer"),
    (None, re.compile(r"/me/assessments/\d+/check/"), "check answers"),
    ("POST", re.compile(r"/me/assessments/\d+/submit/"), "send answers (upstream)"),
    ("GET", re.compile(r"/me/assessments/\d+/results/"), "results"),
    ("GET", re.compile(r"/me/assessments/\d+/status/"), "status poll"),
    ("GET", re.compile(r"/dashboard/"), "staff: dashboard"),
    ("GET", re.compile(r"/learners/"), "staff: learner list"),
)


def page_name(method: str, path: str) -> str:
    """Return the name a request is reported under (ids and query strings left out)."""
    bare = path.split("?", 1)[0].split("#", 1)[0]
    for wanted, pattern, name in _PAGES:
        if (wanted is None or wanted == method) and pattern.fullmatch(bare):
            return name
    return f"other {method}"


@dataclass(frozen=True)
class Sample:
    """One HTTP request: when it started and ended (seconds into the run), and its outcome."""

    page: str
    started: float
    seconds: float
    status: int  # 0 when no response came (connection refused, reset, timeout)
    error: str | None = None  # the kind of error, or None for an expected answer

    @property
    def ended(self) -> float:
        return self.started + self.seconds


@dataclass
class Window:
    """The stretch of the run in which errors are expected: from the kill to recovery."""

    start: float
    end: float

    def covers(self, sample: Sample) -> bool:
        """Return whether a request overlapped the window (it may have been cut by the kill)."""
        return sample.ended >= self.start and sample.started <= self.end


def page_rows(samples: list[Sample]) -> list[tuple[str, int, float, float, float]]:
    """Return (page, requests, p50, p95, target) for each page, slowest target first."""
    by_page: dict[str, list[float]] = {}
    for sample in samples:
        if sample.error is None:
            by_page.setdefault(sample.page, []).append(sample.seconds)
    rows = []
    for page, durations in by_page.items():
        target = page_target(page)
        rows.append(
            (page, len(durations), percentile(durations, 0.5), percentile(durations, 0.95), target)
        )
    return sorted(rows, key=lambda row: (row[4], row[0]))


def page_target(page: str) -> float:
    """Return the p95 a page must stay under."""
    if page in UPSTREAM_PAGES:
        return TARGET_UPSTREAM_P95
    if page in PASSWORD_PAGES:
        return TARGET_PASSWORD_P95
    return TARGET_LOCAL_P95


@dataclass
class Fault:
    """A fault the run made on purpose (FAULTS=1), and the errors a user may see during it.

    `allowed` lists the error kinds a working portal may answer with meanwhile ("HTTP 503"
    while the database is down); anything else in the window is a failure.
    """

    name: str
    window: Window
    allowed: tuple[str, ...] = ()


def errors_by_kind(
    samples: list[Sample], window: Window | None, faults: list[Fault] = ()
) -> tuple[Counter, Counter]:
    """Return the errors inside the kill window and outside it (and every fault's window)."""
    inside: Counter = Counter()
    outside: Counter = Counter()
    for sample in samples:
        if sample.error is None:
            continue
        key = f"{sample.error} ({sample.page})"
        if window is not None and window.covers(sample):
            inside[key] += 1
        elif not any(fault.window.covers(sample) for fault in faults):
            outside[key] += 1
    return inside, outside


def fault_errors(samples: list[Sample], fault: Fault) -> tuple[Counter, Counter]:
    """Return the errors during a fault: those it allows and the others, counted by kind."""
    allowed: Counter = Counter()
    others: Counter = Counter()
    for sample in samples:
        if sample.error is not None and fault.window.covers(sample):
            bucket = allowed if sample.error in fault.allowed else others
            bucket[f"{sample.error} ({sample.page})"] += 1
    return allowed, others


def fault_rows(figures: RunFigures) -> list[Row]:
    """Return the rows of a run with faults: each fault, any 500, the processes at the end."""
    rows: list[Row] = []
    for fault in figures.faults:
        allowed, others = fault_errors(figures.samples, fault)
        shown = "; ".join(part for part in (_counts(allowed), _counts(others)) if part != "none")
        rows.append(
            (
                f"errors during {fault.name} ({fault.window.start:.0f}-{fault.window.end:.0f} s)",
                shown or "none",
                " or ".join(fault.allowed) + " only" if fault.allowed else "none",
                _verdict(not others),
            )
        )
    server_errors = sum(1 for sample in figures.samples if sample.status == 500)
    rows.append(("HTTP 500 at any time", str(server_errors), "0", _verdict(server_errors == 0)))
    rows.append(
        (
            "processes stopped by themselves at the end",
            ", ".join(figures.dead) or "none",
            "none",
            _verdict(not figures.dead),
        )
    )
    return rows


@dataclass
class UpstreamCheck:
    """What the sandbox received compared with what the portal's learners sent and saved."""

    attempts: int = 0  # attempts the learners sent
    exactly_once: int = 0  # of those, accepted upstream exactly once
    not_once: dict[int, int] = field(default_factory=dict)  # assessment id -> times accepted
    refused_resends: int = 0  # resends the sandbox refused as already submitted
    submit_statuses: dict[str, int] = field(default_factory=dict)
    answers_saved: int = 0
    answers_lost: int = 0


def check_upstream(sent: dict[int, set[str]], report: dict[str, Any]) -> UpstreamCheck:
    """Compare each sent attempt (assessment id -> answer ids saved last) with the sandbox.

    An attempt passes if the sandbox accepted exactly one submission for it; an answer is
    lost if the answer id the learner saved last for a question is not among those the
    sandbox received (answer ids are unique across questions).
    """
    by_id = {entry["assessment_id"]: entry for entry in report["assessments"]}
    check = UpstreamCheck(submit_statuses=dict(report.get("submit_statuses", {})))
    check.refused_resends = sum(e["refused_as_already_submitted"] for e in by_id.values())
    for assessment_id, answers in sent.items():
        entry = by_id.get(assessment_id, {"accepted": 0, "answers": None})
        check.attempts += 1
        if entry["accepted"] == 1:
            check.exactly_once += 1
        else:
            check.not_once[assessment_id] = entry["accepted"]
        received = set((entry["answers"] or {}).values())
        check.answers_saved += len(answers)
        check.answers_lost += len(answers - received)
    # Accepted submissions for assessments no learner says it sent: sent twice, or a stray.
    for assessment_id, entry in by_id.items():
        if assessment_id not in sent and entry["accepted"] > 0:
            check.not_once[assessment_id] = entry["accepted"]
    return check


@dataclass
class RunFigures:
    """Everything the table reports about one run."""

    learners: int
    completed: int
    seconds: float  # from the first learner's start to the last request
    samples: list[Sample]
    window: Window | None
    upstream: UpstreamCheck
    kill_note: str = ""
    faults: list[Fault] = field(default_factory=list)  # FAULTS=1 only
    dead: list[str] = field(default_factory=list)  # processes that stopped by themselves
    cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds by process role
    load_average: tuple[float, float, float] | None = None  # 1-minute: start, highest, end
    connections: int | None = None  # the most connections open to the database at once


# The portal's own processes, whose CPU a journey costs (not the sandbox or the generator).
PORTAL_ROLES = ("web (gunicorn)", "workers and sweep")


def cpu_rows(figures: RunFigures) -> list[Row]:
    """Return the rows of the CPU the run's processes spent, per journey and in all."""
    if not figures.cpu:
        return []
    portal = sum(figures.cpu.get(role, 0.0) for role in PORTAL_ROLES)
    journeys = max(figures.completed, 1)
    database = figures.cpu.get("PostgreSQL", 0.0)
    per_journey = f"{portal / journeys:.3f} s"
    if database:
        per_journey += f" (PostgreSQL {database / journeys:.3f} s more)"
    spent = "; ".join(f"{role} {seconds:.0f} s" for role, seconds in figures.cpu.items())
    generator = figures.cpu.get("load generator", 0.0)
    rows: list[Row] = [
        (
            f"portal CPU per completed journey (web + workers, over {figures.completed:,})",
            per_journey,
            "",
            "",
        ),
        (
            "CPU seconds over the run, by process",
            f"{spent}; the generator used {generator / max(figures.seconds, 1e-9):.0%} of a core",
            "",
            "",
        ),
    ]
    if figures.connections is not None:
        rows.append(
            ("database connections open at once (highest)", str(figures.connections), "", "")
        )
    if figures.load_average is not None:
        start, highest, end = figures.load_average
        rows.append(
            (
                "load average (1 min): at the start / highest / at the end",
                f"{start:.1f} / {highest:.1f} / {end:.1f}",
                "",
                "",
            )
        )
    return rows


Row = tuple[str, str, str, str]


def table_rows(figures: RunFigures) -> list[Row]:
    """Return the table's rows: (measure, measured, target, PASS/FAIL or blank)."""
    samples, upstream = figures.samples, figures.upstream
    inside, outside = errors_by_kind(samples, figures.window, figures.faults)
    rows: list[Row] = [
        (
            "learners completed (signed in, answered, sent, read results)",
            f"{figures.completed} / {figures.learners}",
            f"{figures.learners}",
            _verdict(figures.completed == figures.learners),
        ),
        (
            "requests; requests/s",
            f"{len(samples):,}; {len(samples) / max(figures.seconds, 1e-9):.1f}/s"
            f" over {figures.seconds:.0f} s",
            "",
            "",
        ),
    ]
    rows.append(
        (
            f"errors during the kill{' (' + figures.kill_note + ')' if figures.kill_note else ''}",
            _counts(inside),
            "any",
            "",
        )
    )
    outside_name = (
        "errors outside the kill and the faults" if figures.faults else "errors outside the kill"
    )
    rows.append((outside_name, _counts(outside), "0", _verdict(not outside)))
    if figures.faults:
        rows += fault_rows(figures)
    for page, count, p50, p95, target in page_rows(samples):
        rows.append(
            (
                f"{page}: p50 / p95 ({count:,} requests)",
                f"{p50 * 1000:.0f} / {p95 * 1000:.0f} ms",
                f"p95 < {target * 1000:.0f} ms",
                _verdict(p95 < target),
            )
        )
    statuses = ", ".join(f"{n} x {s}" for s, n in sorted(upstream.submit_statuses.items()))
    rows.append(
        (
            "submissions accepted upstream per attempt (sandbox's count)",
            f"exactly 1 for {upstream.exactly_once} / {upstream.attempts}"
            + (f"; not 1: {_not_once(upstream.not_once)}" if upstream.not_once else ""),
            "exactly 1 for every attempt",
            _verdict(
                upstream.attempts > 0
                and not upstream.not_once
                and upstream.exactly_once == upstream.attempts
            ),
        )
    )
    rows.append(
        (
            "submit requests the sandbox saw (status: count)",
            f"{statuses or 'none'}; resends refused as already submitted:"
            f" {upstream.refused_resends}",
            "",
            "",
        )
    )
    rows.append(
        (
            "lost answers (saved by a learner, missing upstream)",
            f"{upstream.answers_lost} of {upstream.answers_saved:,}",
            "0",
            _verdict(upstream.answers_lost == 0),
        )
    )
    return rows + cpu_rows(figures)


def render_table(rows: list[Row]) -> str:
    """Return the rows as one aligned text table with a header."""
    header = ("measure", "measured", "target", "result")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(4)]
    rule = "  ".join("-" * width for width in widths)
    lines = ["  ".join(text.ljust(width) for text, width in zip(header, widths, strict=True))]
    lines.append(rule)
    lines += ["  ".join(t.ljust(w) for t, w in zip(row, widths, strict=True)) for row in rows]
    lines.append(rule)
    return "\n".join(line.rstrip() for line in lines)


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def _counts(counter: Counter) -> str:
    if not counter:
        return "none"
    return "; ".join(f"{count} x {kind}" for kind, count in counter.most_common())


def _not_once(not_once: dict[int, int]) -> str:
    shown = sorted(not_once.items())[:5]
    more = f" and {len(not_once) - 5} more" if len(not_once) > 5 else ""
    return ", ".join(f"assessment {a}: {n}" for a, n in shown) + more


_REQUEST_LINE = re.compile(
    r"\] (GET|POST|HEAD) (\S+) \d{3} [\d.]+ ms \(cpu ([\d.]+) ms, (\d+) queries\)"
)


def request_costs(lines) -> list[tuple[str, int, float, float]]:
    """Return (method and route, requests, mean CPU ms, mean queries) from request log lines.

    The lines are the web processes' own (ops.request_log): each says the CPU time its thread
    spent and the queries it sent. Busiest first, by CPU spent in all.
    """
    sums: dict[str, list[float]] = {}
    for line in lines:
        match = _REQUEST_LINE.search(line)
        if match is None:
            continue
        method, route, cpu, queries = match.groups()
        entry = sums.setdefault(f"{method} {route}", [0, 0.0, 0.0])
        entry[0] += 1
        entry[1] += float(cpu)
        entry[2] += int(queries)
    rows = [(name, int(n), cpu / n, queries / n) for name, (n, cpu, queries) in sums.items()]
    return sorted(rows, key=lambda row: -row[1] * row[2])


def render_costs(rows: list[tuple[str, int, float, float]]) -> str:
    """Return the request costs as an aligned table, with the total CPU of each route."""
    header = ("request (web processes' log)", "requests", "CPU ms each", "queries each", "CPU s")
    body = [
        (name, f"{count:,}", f"{cpu:.1f}", f"{queries:.1f}", f"{count * cpu / 1000:.1f}")
        for name, count, cpu, queries in rows
    ]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(5)]
    return "\n".join(
        "  ".join(text.ljust(width) for text, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, *body]
    )
