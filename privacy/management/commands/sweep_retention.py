"""Erase the records of learners gone longer than the partner keeps them, unless held."""

from ops.sweep import SweepCommand
from privacy.retention import records_sweep


class Command(SweepCommand):
    help = (
        "Erase the personal data, answers and the written part of results of learners whose "
        "last activity is older than the partner's retention period (Settings), as staff "
        "erasure does, keeping anonymous counts; learners under a safeguarding hold are kept. "
        "Run it from cron every hour, or with --every to loop."
    )

    def sweep(self) -> str | None:
        counts = records_sweep()
        if not any(counts.values()):
            return None
        return (
            f"Retention: {counts['expired']} learners' records erased, {counts['held']} held, "
            f"{counts['deferred']} waiting for a submission in flight."
        )
