"""`manage.py serve` (`make serve`): the portal as it runs in production, all its processes."""

import os
import shutil
import sys
import tempfile
from pathlib import Path

from django.conf import settings
from django.core.checks import Tags, run_checks
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from ops.launcher import Child, Launcher

# The sweeps and how often each runs (seconds): the same as `make run`.
SWEEPS = {
    "sweep_attempts": 60,
    "sweep_imports": 60,
    "sweep_alerts": 30,
    "sweep_retention": 3600,
    "sweep_housekeeping": 3600,
    # Roster syncs whose worker died, and the drop folder's files (when ROSTER_DROP_DIR is set).
    "sweep_roster": 30,
}
GUNICORN_CONFIG = Path(__file__).resolve().parents[2] / "gunicorn.conf.py"


def refuse_unsafe_settings() -> None:
    """Refuse to serve in development mode or with a weak secret key (it signs sessions)."""
    if settings.DEBUG:
        raise CommandError(
            "make serve runs the portal in production: set DEBUG=false and the variables "
            ".env.example marks as required (make run is the development server)."
        )
    weak = [
        message
        for message in run_checks(tags=[Tags.security], include_deployment_checks=True)
        if message.id == "security.W009"
    ]
    if weak:
        raise CommandError(
            "SECRET_KEY is too short or too simple to sign sessions: set 50 or more random "
            'characters (python -c "import secrets; print(secrets.token_urlsafe(50))").'
        )


def manage(*args: str) -> list[str]:
    """Return the command line of a management command in a process of its own."""
    return [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), *args]


def children(host: str, port: int, *, workers: bool, sweeps: bool) -> list[Child]:
    """Return the processes to run: the web server, the task workers and the sweeps."""
    web = [sys.executable, "-m", "gunicorn", "--config", str(GUNICORN_CONFIG)]
    found = [Child("web server (gunicorn)", [*web, f"--bind={host}:{port}", "portal.wsgi"])]
    if workers:
        found.append(Child("delivery worker", manage("db_worker", "--no-reload")))
        # One import row at a time each: as many rows are sent at once as there are workers.
        found += [
            Child(
                f"imports worker {number}",
                manage("db_worker", "--no-reload", "--queue-name", "imports"),
            )
            for number in range(1, max(1, settings.IMPORT_WORKERS) + 1)
        ]
        # Answer pictures and read-aloud audio apart: a slow picture host never delays a
        # submission's delivery or a safeguarding alert.
        found.append(
            Child("media worker", manage("db_worker", "--no-reload", "--queue-name", "media"))
        )
    if sweeps:
        found += [Child(name, manage(name, "--every", str(secs))) for name, secs in SWEEPS.items()]
    return found


class Command(BaseCommand):
    help = (
        "Run the portal for production: collectstatic and migrate, then gunicorn, the task "
        "workers and the sweeps, until Ctrl-C or TERM (which stops them all). A process that "
        "dies is started again; if they keep dying, everything stops."
    )
    requires_system_checks = []  # checked once below, with --deploy when DEBUG is off

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default=os.environ.get("BIND_HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument(
            "--no-workers", action="store_true",
            help="Start no db_worker (another machine runs them).",
        )  # fmt: skip
        parser.add_argument(
            "--no-sweeps", action="store_true",
            help="Start no sweep (another machine runs them).",
        )  # fmt: skip
        parser.add_argument(
            "--no-migrate", action="store_true",
            help="Do not migrate (another machine does, before this one starts).",
        )  # fmt: skip
        parser.add_argument(
            "--stop-timeout", type=float, default=40.0, metavar="SECONDS",
            help="How long the processes get to finish what they are doing when told to stop.",
        )  # fmt: skip
        parser.add_argument(
            "--restart-limit", type=int, default=5, metavar="DEATHS",
            help="A process that dies is started again, until this many have died within "
            "--restart-window: then everything stops.",
        )  # fmt: skip
        parser.add_argument(
            "--restart-window", type=float, default=300.0, metavar="SECONDS",
            help="The window --restart-limit counts deaths in.",
        )  # fmt: skip

    def handle(self, *args, host: str, port: int, **options) -> None:
        refuse_unsafe_settings()
        call_command("check", deploy=True, fail_level="ERROR")
        call_command("collectstatic", interactive=False, verbosity=0)
        self.stdout.write(f"Static files collected in {settings.STATIC_ROOT}.")
        if not options["no_migrate"]:
            call_command("migrate", interactive=False, verbosity=1)
        env = dict(os.environ)  # settings loaded .env into os.environ: the children see it too
        metrics_dir = prepare_metrics_dir(env)
        found = children(
            host, port, workers=not options["no_workers"], sweeps=not options["no_sweeps"]
        )
        self.stdout.write(
            f"Serving the portal on http://{host}:{port}/ with "
            f"{env.get('WEB_CONCURRENCY', '2')} processes x {env.get('GUNICORN_THREADS', '8')} "
            f"threads; also running: {', '.join(c.name for c in found[1:]) or 'nothing else'}. "
            "Ctrl-C stops them all."
        )
        self.stdout.flush()
        try:
            status = Launcher(
                found,
                cwd=Path(settings.BASE_DIR),
                env=env,
                stop_timeout=options["stop_timeout"],
                restart_limit=options["restart_limit"],
                restart_window=options["restart_window"],
                say=lambda line: (self.stdout.write(line), self.stdout.flush()),
            ).run()
        finally:
            if metrics_dir is not None:
                shutil.rmtree(metrics_dir, ignore_errors=True)
        if status:
            sys.exit(status)


# ---- Metrics across processes
def prepare_metrics_dir(env: dict[str, str]) -> Path | None:
    """Give prometheus-client's multiprocess mode an empty directory; return it if made here.

    An operator's PROMETHEUS_MULTIPROC_DIR is emptied (files of an earlier run would count);
    otherwise a temporary one is made for this run and removed at its end.
    """
    given = env.get("PROMETHEUS_MULTIPROC_DIR")
    if given:
        Path(given).mkdir(parents=True, exist_ok=True)
        for stale in Path(given).glob("*.db"):
            stale.unlink(missing_ok=True)
        return None
    made = Path(tempfile.mkdtemp(prefix="portal-metrics-"))
    env["PROMETHEUS_MULTIPROC_DIR"] = str(made)
    return made
