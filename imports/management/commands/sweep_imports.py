"""Resume bulk registrations whose worker died, and delete what imports must not keep."""

from imports.services import import_jobs_sweep
from ops.sweep import SweepCommand


class Command(SweepCommand):
    help = (
        "Resume import jobs whose worker has been silent for IMPORT_STALLED_AFTER seconds "
        "(rows that may have been sent are never resent), wipe generated passwords an hour "
        "after their job finished, discard unconfirmed previews after IMPORT_PREVIEW_TTL and "
        "delete jobs older than IMPORT_KEEP_DAYS. Run it from cron every minute, or with --every."
    )

    def sweep(self) -> str | None:
        counts = import_jobs_sweep()
        if not any(counts.values()):
            return None
        return (
            f"Imports: {counts['resumed']} resumed, {counts['expired']} sets of "
            f"passwords wiped, {counts['discarded']} previews discarded, "
            f"{counts['deleted']} old jobs deleted."
        )
