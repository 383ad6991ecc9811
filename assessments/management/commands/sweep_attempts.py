"""Re-queue pending deliveries, results, pictures and audio that are due; unstick submissions."""

from assessments.delivery import attempts_sweep
from ops.sweep import SweepCommand
from pictures.services import pictures_retry_due
from speech.services import recordings_retry_due


class Command(SweepCommand):
    help = (
        "Queue delivery of pending submissions, fetching of missing results and of answer "
        "pictures, and making of read-aloud audio that are due, and recover submissions left "
        "'submitting' by a process that died. Run it from cron every minute, or with --every "
        "to loop."
    )

    def sweep(self) -> str | None:
        counts = attempts_sweep()
        counts["pictures"] = pictures_retry_due()
        counts["recordings"] = recordings_retry_due()
        if not any(counts.values()):
            return None
        return (
            f"Sweep: {counts['unstuck']} unstuck, {counts['deliveries']} deliveries, "
            f"{counts['results']} results fetches, {counts['pictures']} picture fetches and "
            f"{counts['recordings']} read-aloud recordings queued."
        )
