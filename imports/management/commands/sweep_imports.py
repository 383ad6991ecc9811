"""Take up bulk registrations a worker left, and delete what imports must not keep."""

from imports.services import import_jobs_sweep
from ops.sweep import SweepCommand


class Command(SweepCommand):
    help = (
        "Fail as of unknown outcome the import rows left 'sending' by a worker that died "
        "(they are never sent again), finish jobs with nothing left, and run again jobs none "
        "of whose rows moved for IMPORT_STALLED_AFTER seconds; wipe generated passwords an "
        "hour after their job finished, discard unconfirmed previews after IMPORT_PREVIEW_TTL "
        "and delete jobs older than IMPORT_KEEP_DAYS. Run it from cron every minute, or with "
        "--every."
    )

    def sweep(self) -> str | None:
        counts = import_jobs_sweep()
        if not any(counts.values()):
            return None
        return (
            f"Imports: {counts['unknown']} rows cut off marked outcome unknown, "
            f"{counts['finished']} finished, {counts['resumed']} resumed, "
            f"{counts['expired']} sets of passwords wiped, {counts['discarded']} previews "
            f"discarded, {counts['deleted']} old jobs deleted."
        )
