"""The shape shared by the sweep commands: sweep once (for cron), or loop with --every."""

import time

from django.core.management.base import BaseCommand


class SweepCommand(BaseCommand):
    """A command that sweeps once and exits, or every --every seconds until interrupted."""

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
            report = self.sweep()
            if report is not None or not every:
                self.stdout.write(report or "Nothing to do.")
            if not every:
                return
            try:
                time.sleep(every)
            except KeyboardInterrupt:
                return
