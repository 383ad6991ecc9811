"""Prune finished task results and old upstream-failure rows."""

from ops.housekeeping import prune_old_rows
from ops.sweep import SweepCommand


class Command(SweepCommand):
    help = (
        "Delete finished background-task results older than TASK_RESULTS_KEEP_DAYS and failed "
        "upstream calls older than UPSTREAM_FAILURES_KEEP_DAYS (waiting and running tasks are "
        "never touched). Run it from cron every hour, or with --every to loop."
    )

    def sweep(self) -> str | None:
        counts = prune_old_rows()
        if not any(counts.values()):
            return None
        return (
            f"Housekeeping: {counts['task_results']} finished task results, "
            f"{counts['cache_rows']} expired cache rows (kept during a Redis outage) and "
            f"{counts['upstream_failures']} upstream failures deleted."
        )
