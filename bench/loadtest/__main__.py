"""`make loadtest`: nginx, two gunicorns and three workers under simulated learners and staff.

    python -m bench.loadtest [--learners 300] [--minutes 10] [--staff 2] [--quick] [--no-kill]
                             [--faults]

Learners start evenly over the first 70% of the run; each journey takes about a fifth of it
(their pauses scale with the run's length). Half-way through, one gunicorn instance (master
and workers) and one delivery worker are killed with SIGKILL and restarted. Then the sandbox
says what it received, and one table is printed. Ctrl-C stops everything the run started.

With --faults (`make loadtest FAULTS=1`) the run has a Redis and a PostgreSQL cluster of its
own on free ports (bench.throwaway), never the machine's: Redis is stopped for 60 s at a third
of the run (a tenth of the run if shorter) and PostgreSQL is stopped and started again at two
thirds. Pages must go on without Redis (no error at all) and answer only 503 while the
database is down; no 500 at any time; every process must still be running at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import tempfile
import threading
import time
from http.client import HTTPConnection
from pathlib import Path

from bench.loadtest import cluster as processes
from bench.loadtest import faults as made_faults
from bench.loadtest import prepare, report
from bench.loadtest.browser import Recorder
from bench.loadtest.cpu import CpuSampler
from bench.loadtest.journeys import Load, spread

DEFAULT_DATABASE_URL = "postgres://root@127.0.0.1:5432/portal_loadtest"
DEFAULT_CACHE_URL = "redis://127.0.0.1:6379/4"
API_KEY = "sandbox-demo-key"
# The upstream as the issue asks: 2% of submissions refused with 503 (this rule first, since
# the first matching rule wins), and every call answered after 150 ms.
SANDBOX_FAULTS = ("submit-assessment=503:rate=0.02", "*=latency:ms=150")
START_SHARE = 0.7  # learners start evenly over this share of the run
JOURNEY_SHARE = 0.2  # a journey's pauses add up to about this share of the run
THINK_STEPS = 40  # pauses in a journey, in units of one think time
RECOVERY_GRACE = 10.0  # seconds after the restarted server answers that errors still count


def environment(database_url: str, cache_url: str) -> dict[str, str]:
    """Return the production-like environment of every process of the run."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "portal.settings",
        "DATABASE_URL": f"{database_url}?conn_max_age=600",
        "CACHE_URL": cache_url,
        "DEBUG": "false",
        "SECRET_KEY": "loadtest-only-secret-key-not-for-production-use-0123456789",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "PARTNER_API_KEY": API_KEY,
        "PARTNER_API_ALLOW_HTTP": "true",
        "SECURE_SSL_REDIRECT": "false",
        "AUDIT_TRUST_X_FORWARDED_FOR": "true",
        # nginx sets X-Request-ID: every log line of a request carries the proxy's id.
        "REQUEST_ID_TRUSTED_PROXIES": "127.0.0.1",
        # Every request's line, as production logs it: it says what each page cost (CPU time
        # and queries), summed up after the table.
        "PORTAL_LOG_LEVEL": "INFO",
        # Simulated staff sign in with a password alone: the load is the portal's, not MFA's.
        "STAFF_MFA_REQUIRED": "false",
        # A submission cut off by the kill sits in `submitting` until the sweep takes it for
        # lost: 30 s here (a single call takes at most 13 s), not 5 minutes, so learners
        # waiting on one see it within the run. Retries of refused ones start after 10 s.
        "SUBMISSION_STUCK_AFTER": "30",
        "DELIVERY_RETRY_BASE": "10",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=300)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--staff", type=int, default=2, help="staff reading pages meanwhile")
    parser.add_argument("--quick", action="store_true", help="40 learners in 2 minutes")
    parser.add_argument("--no-kill", action="store_true", help="kill nothing half-way")
    parser.add_argument(
        "--faults", action="store_true", help="own Redis and PostgreSQL, stopped during the run"
    )
    args = parser.parse_args()
    if args.quick:
        args.learners, args.minutes = 40, 2.0
    if not processes.nginx_available():
        sys.exit("nginx is not installed: apt-get install nginx (make loadtest does)")

    directory = Path(tempfile.mkdtemp(prefix="portal-loadtest-"))
    services = made_faults.Services(directory) if args.faults else None
    if services is not None:
        print("Starting this run's own Redis and PostgreSQL cluster", flush=True)
        services.start()
        database_url, cache_url = services.database_url, services.cache_url
    else:
        database_url = os.environ.get("LOADTEST_DATABASE_URL", DEFAULT_DATABASE_URL)
        cache_url = os.environ.get("LOADTEST_CACHE_URL", DEFAULT_CACHE_URL)
    env = environment(database_url, cache_url)
    # With DEBUG off pages name the hashed static files: collected once for every process.
    env["STATIC_ROOT"] = str(directory / "static")
    print(f"Logs and nginx config: {directory}", flush=True)
    # Ctrl-C (even if the shell started this with SIGINT ignored) and TERM stop the run.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    cluster = processes.Cluster(env, directory)
    stop = threading.Event()
    try:
        prepare.recreate_database(database_url, env)
        figures = run(cluster, args, stop, services)
    except KeyboardInterrupt:
        print("\nInterrupted: stopping every process of the run.", flush=True)
        return 130
    finally:
        # A second Ctrl-C must not cut the stopping short and leave processes behind.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stop.set()
        cluster.stop()
        if services is not None:
            services.stop()
    print()
    print(report.render_table(report.table_rows(figures)))
    print()
    print(report.render_costs(report.request_costs(_web_log_lines(directory))))
    print(f"Logs: {directory}")
    return 0


def _connections_counter():
    """Return a reading of the connections open to the run's database (besides its own)."""
    from django.db import connections

    kept = {}

    def count() -> int:
        if "connection" not in kept:
            kept["connection"] = connections.create_connection("default")
            kept["connection"].inc_thread_sharing()  # read by the main thread, then the sampler
        try:
            with kept["connection"].cursor() as cursor:
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                )
                return cursor.fetchone()[0] - 1
        except Exception:
            # A fault run's restart: connect again next time.
            with contextlib.suppress(Exception):
                kept.pop("connection").close()
            raise

    return count


def _web_log_lines(directory: Path):
    """Yield the lines the web processes logged (both instances, restarts included)."""
    for name in ("web-a", "web-b"):
        path = directory / f"{name}.log"
        if path.exists():
            with path.open(encoding="utf-8", errors="replace") as log:
                yield from log


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run(
    cluster: processes.Cluster,
    args: argparse.Namespace,
    stop: threading.Event,
    services: made_faults.Services | None,
):
    """Start the processes, prepare people, run the load with the kill; return the figures."""
    sandbox_port = processes.free_port()
    faults = [f"--fault={spec}" for spec in SANDBOX_FAULTS]
    cluster.manage(
        "sandbox", "sandbox", f"--port={sandbox_port}", "--no-persist", "--seed=17", *faults
    )
    processes.wait_for_port(sandbox_port, timeout=60)
    cluster.ports["sandbox"] = sandbox_port
    cluster.env["PARTNER_API_BASE_URL"] = f"http://127.0.0.1:{sandbox_port}/plapi/v1/partners"
    os.environ.update(cluster.env)
    os.environ["PORTAL_LOG_LEVEL"] = "WARNING"  # this process's own lines stay out of the way
    import django

    django.setup()
    from django.core.management import call_command

    call_command("collectstatic", interactive=False, verbosity=0)
    prepare.clear_cache()
    print(f"Registering {args.learners} learners with the sandbox", flush=True)
    people = prepare.create_people(args.learners, args.staff)

    cluster.gunicorn("web-a")
    cluster.gunicorn("web-b")
    cluster.manage("worker-1", "db_worker", "--no-startup-delay")
    cluster.manage("worker-2", "db_worker", "--no-startup-delay")
    cluster.manage("imports", "db_worker", "--no-startup-delay", "--queue-name=imports")
    # Answer pictures and read-aloud audio, as make serve runs them: without it, every
    # question page's markup would wait on audio that never comes and be rebuilt every 5 s.
    cluster.manage("media", "db_worker", "--no-startup-delay", "--queue-name=media")
    cluster.manage("sweep", "sweep_attempts", f"--every={processes.SWEEP_EVERY}")
    port = cluster.nginx(["web-a", "web-b"])
    for name in ("web-a", "web-b"):
        processes.wait_until_serving(cluster.ports[name])
    processes.wait_until_serving(port)
    print(f"nginx on 127.0.0.1:{port} in front of web-a and web-b; load starts", flush=True)

    seconds = args.minutes * 60
    think = seconds * JOURNEY_SHARE / THINK_STEPS
    recorder = Recorder()
    starts = spread(len(people.learners), seconds * START_SHARE)
    load = Load(
        recorder,
        ("127.0.0.1", port),
        list(zip(people.learners, starts, strict=True)),
        people.staff,
        people.password,
        think,
    )
    sampler = CpuSampler(cpu_roles(cluster), {"connections": _connections_counter()})
    sampler.start()
    load.start()

    fault_plan = made_faults.FaultPlan(services, recorder, seconds) if services else None
    if fault_plan is not None:
        threading.Thread(target=fault_plan.run, args=(stop,), daemon=True).start()
    window = None
    kill_note = "no kill"
    try:
        if not args.no_kill:
            _sleep_until(recorder, seconds / 2)
            window, kill_note = _kill_and_restart(cluster, recorder)
        deadline = seconds + max(60.0, seconds * 0.2)
        load.learners_done.wait(timeout=max(0.0, deadline - recorder.now()))
        elapsed = recorder.now()
        if fault_plan is not None:
            fault_plan.finished.wait(timeout=120)  # a short run may end before the last fault
    finally:
        load.stop()
    cpu = sampler.stop()
    dead = cluster.dead()
    stop.set()
    outcomes = load.outcomes
    sent = {o.assessment_id: set(o.saved.values()) for o in outcomes if o.sent}
    upstream = report.check_upstream(sent, _sandbox_report(cluster.ports["sandbox"]))
    _print_portal_states(outcomes)
    return report.RunFigures(
        learners=len(outcomes),
        completed=sum(o.completed for o in outcomes),
        seconds=elapsed,
        samples=list(recorder.samples),
        window=window,
        upstream=upstream,
        kill_note=kill_note,
        faults=fault_plan.faults if fault_plan is not None else [],
        dead=dead,
        cpu={**cpu, "load generator": load.cpu_seconds},
        load_average=sampler.load_averages,
        connections=sampler.highest.get("connections"),
    )


def cpu_roles(cluster: processes.Cluster):
    """Return how the sampler tells the run's processes apart, by process group and name."""

    def groups(*names: str):
        return lambda group, name: group in cluster.groups(names)

    return {
        "web (gunicorn)": groups("web-a", "web-b"),
        "workers and sweep": groups("worker-1", "worker-2", "imports", "media", "sweep"),
        "PostgreSQL": lambda group, name: name == "postgres",
        "Redis": lambda group, name: name.startswith("redis-server"),
        "nginx": groups("nginx"),
        "sandbox": groups("sandbox"),
    }


def _kill_and_restart(cluster: processes.Cluster, recorder: Recorder):
    """SIGKILL web-a (master and workers) and worker-1, restart both; return the window."""
    started = recorder.now()
    cluster.kill("web-a")
    cluster.kill("worker-1")
    print(f"{started:.0f} s: killed web-a and worker-1 (SIGKILL); restarting", flush=True)
    cluster.gunicorn("web-a", cluster.ports["web-a"])
    cluster.manage("worker-1", "db_worker", "--no-startup-delay")
    processes.wait_until_serving(cluster.ports["web-a"])
    back = recorder.now()
    print(f"{back:.0f} s: web-a serves again", flush=True)
    note = f"web-a + worker-1 at {started:.0f} s, back after {back - started:.1f} s"
    return report.Window(started, back + RECOVERY_GRACE), note


def _sleep_until(recorder: Recorder, moment: float) -> None:
    while recorder.now() < moment:
        time.sleep(min(1.0, moment - recorder.now()))


def _sandbox_report(port: int) -> dict:
    connection = HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/_sandbox/submissions", headers={"apikey": API_KEY})
    response = connection.getresponse()
    body = json.loads(response.read())
    connection.close()
    if response.status != 200:
        raise RuntimeError(f"the sandbox's report answered {response.status}: {body}")
    return body


def _print_portal_states(outcomes) -> None:
    """Print where the portal's attempts stand, and why learners did not finish."""
    from django.db import connections
    from django.db.models import Count

    from assessments.models import AssessmentAttempt

    connections.close_all()  # one made before a fault run's database restart is gone
    states = AssessmentAttempt.objects.values_list("state").annotate(n=Count("id"))
    print("Attempts in the portal by state: " + ", ".join(f"{s}: {n}" for s, n in states))
    for outcome in [o for o in outcomes if not o.completed][:10]:
        print(f"  not completed: {outcome.username}: {outcome.failure or 'still going'}")


if __name__ == "__main__":
    sys.exit(main())
