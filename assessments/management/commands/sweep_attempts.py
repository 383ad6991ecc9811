"""Re-queue pending deliveries and results fetches that are due, and unstick dead submissions."""

import time

from django.core.management.base import BaseCommand

from assessments.delivery import attempts_sweep


class Command(BaseCommand):
    help = (
        "Queue delivery of pending submissions and fetching of missing results that are due, "
        "and recover submissions left 'submitting' by a process that died. Run it from cron "
        "every minute, or with --every to loop."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--every", type=int, default=0, metavar="SECONDS",
            help="Keep running, sweeping every SECONDS (0: sweep once and exit).",
        )  # fmt: skip

    def handle(self, *args, every: int, **options) -> None:
        while True:
            counts = attempts_sweep()
            if any(counts.values()) or not every:
                self.stdout.write(
                    f"Sweep: {counts['unstuck']} unstuck, {counts['deliveries']} deliveries "
                    f"and {counts['results']} results fetches queued."
                )
            if not every:
                return
            try:
                time.sleep(every)
            except KeyboardInterrupt:
                return
