"""Resume bulk registrations whose worker died, and delete what imports must not keep."""

import time

from django.core.management.base import BaseCommand

from learners.imports import import_jobs_sweep


class Command(BaseCommand):
    help = (
        "Resume import jobs whose worker has been silent for IMPORT_STALLED_AFTER seconds "
        "(rows that may have been sent are never resent), wipe generated passwords an hour "
        "after their job finished, discard unconfirmed previews after IMPORT_PREVIEW_TTL and "
        "delete jobs older than IMPORT_KEEP_DAYS. Run it from cron every minute, or with --every."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--every", type=int, default=0, metavar="SECONDS",
            help="Keep running, sweeping every SECONDS (0: sweep once and exit).",
        )  # fmt: skip

    def handle(self, *args, every: int, **options) -> None:
        while True:
            counts = import_jobs_sweep()
            if any(counts.values()) or not every:
                self.stdout.write(
                    f"Imports: {counts['resumed']} resumed, {counts['expired']} sets of "
                    f"passwords wiped, {counts['discarded']} previews discarded, "
                    f"{counts['deleted']} old jobs deleted."
                )
            if not every:
                return
            try:
                time.sleep(every)
            except KeyboardInterrupt:
                return
