"""Re-queue pending deliveries and results fetches that are due, and unstick dead submissions."""

from assessments.delivery import attempts_sweep
from ops.sweep import SweepCommand
from speech.services import recordings_retry_due


class Command(SweepCommand):
    help = (
        "Queue delivery of pending submissions and fetching of missing results that are due, "
        "and recover submissions left 'submitting' by a process that died; queue again "
        "read-aloud audio whose making is due. Run it from cron "
        "every minute, or with --every to loop."
    )

    def sweep(self) -> str | None:
        counts = attempts_sweep()
        recordings = recordings_retry_due()
        if not any(counts.values()) and not recordings:
            return None
        return (
            f"Sweep: {counts['unstuck']} unstuck, {counts['deliveries']} deliveries, "
            f"{counts['results']} results fetches and {recordings} read-aloud recordings queued."
        )
