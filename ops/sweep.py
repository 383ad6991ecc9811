"""The shape shared by the sweep commands: sweep once (for cron), or loop with --every."""

import time

from django.core.management.base import BaseCommand, CommandError

from ops.database import DATABASE_TROUBLE, describe, wait_for_database


class SweepCommand(BaseCommand):
    """A command that sweeps once and exits, or every --every seconds until interrupted.

    Looping, it outlasts the database: a sweep cut off by a lost connection waits for the
    database (with backoff, said once in the log) and sweeps again from the start, which every
    sweep allows (each step checks the state it changes). Once (cron) it exits with a message;
    cron's next run sweeps.
    """

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--every", type=int, default=0, metavar="SECONDS",
            help="Keep running, sweeping every SECONDS (0: sweep once and exit).",
        )  # fmt: skip

    def sweep(self) -> str | None:
        """Do one sweep; return a line to print when it did something, else None."""
        raise NotImplementedError

    def handle(self, *args, every: int, **options) -> None:
        while True:
            try:
                report = self.sweep()
            except DATABASE_TROUBLE as error:
                if not every:
                    raise CommandError(
                        f"The database did not answer ({describe(error)}); nothing more was "
                        "swept. Run it again once the database is back."
                    ) from error
                wait_for_database(error, who=self._name())
                continue
            if report is not None or not every:
                self.stdout.write(report or "Nothing to do.")
            if not every:
                return
            try:
                time.sleep(every)
            except KeyboardInterrupt:
                return

    def _name(self) -> str:
        return self.__module__.rsplit(".", 1)[-1]  # the command's name, e.g. sweep_imports
