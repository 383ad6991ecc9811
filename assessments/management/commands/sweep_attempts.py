"""Re-queue pending deliveries and results fetches that are due, and unstick dead submissions."""

from assessments.delivery import attempts_sweep
from ops.sweep import SweepCommand


class Command(SweepCommand):
    help = (
        "Queue delivery of pending submissions and fetching of missing results that are due, "
        "and recover submissions left 'submitting' by a process that died. Run it from cron "
        "every minute, or with --every to loop."
    )

    def sweep(self) -> str | None:
        counts = attempts_sweep()
        if not any(counts.values()):
            return None
        return (
            f"Sweep: {counts['unstuck']} unstuck, {counts['deliveries']} deliveries "
            f"and {counts['results']} results fetches queued."
        )
