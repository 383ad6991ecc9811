"""Escalate unacknowledged safeguarding alerts that are due, and queue unsent alert emails."""

from ops.sweep import SweepCommand
from safeguarding.services import alerts_sweep


class Command(SweepCommand):
    help = (
        "Escalate safeguarding alerts nobody acknowledged in time (to the deputies and the "
        "leads' banner) and queue alert emails that are due or were lost. Run it from cron "
        "every minute, or with --every to loop."
    )

    def sweep(self) -> str | None:
        counts = alerts_sweep()
        if not any(counts.values()):
            return None
        return f"Alerts: {counts['escalated']} escalated, {counts['emails']} emails queued."
