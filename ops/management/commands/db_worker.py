"""`manage.py db_worker`: django_tasks_db's worker, waiting out database outages (ops.worker).

The same command name and arguments as the library's (this app comes before django_tasks_db
in INSTALLED_APPS, so its command is the one run): `manage.py serve`, `make run` and the tests
start it unchanged.
"""

import os

from django.db import connections
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV, run_with_reloader
from django_tasks_db.management.commands import db_worker

from ops.worker import OutageTolerantWorker


class Command(db_worker.Command):
    help = (
        "Run a database background worker; when the database stops answering, wait for it "
        "and go on."
    )

    def handle(
        self,
        *,
        verbosity: int,
        queue_name: str,
        exclude_queues: str,
        reload: bool,
        **options,
    ) -> None:
        self.configure_logging(verbosity)
        _no_health_checks()
        if reload and options["batch"]:
            reload = False  # the library's rule: a batch is never reloaded
        if exclude_queues and "*" not in queue_name.split(","):
            raise db_worker.CommandError("--exclude-queues can only be used with --queue-name=*")
        worker = OutageTolerantWorker(
            name=f"the worker of queue {queue_name}",
            queue_names=queue_name.split(","),
            excluded_queue_names=exclude_queues.split(",") if exclude_queues else [],
            interval=options["interval"],
            batch=options["batch"],
            backend_name=options["backend_name"],
            startup_delay=options["startup_delay"],
            max_tasks=options["max_tasks"],
            worker_id=options["worker_id"],
        )
        if reload:
            if os.environ.get(DJANGO_AUTORELOAD_ENV) == "true":
                worker.configure_signals()  # only the reloader's child handles signals
            run_with_reloader(worker.run)
        else:
            worker.configure_signals()
            worker.run()


def _no_health_checks() -> None:
    """Skip the query that checks a kept connection before each task.

    A web request needs it: without it, the first request after a PostgreSQL restart fails on
    a broken connection. A worker does not: its loop waits out that failure and goes on with
    a new connection (ops.worker). Without it, each task and each idle poll makes one round
    trip to PostgreSQL less: a bulk registration's row makes 13, not 14.
    """
    for alias in connections:
        connections.settings[alias]["CONN_HEALTH_CHECKS"] = False
        connections[alias].health_check_enabled = False
