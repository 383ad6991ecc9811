"""Take the roster file sets put in the drop folder (ROSTER_DROP_DIR), each exactly once."""

from django.conf import settings

from ops.sweep import SweepCommand
from roster.drop import roster_drop_sweep


class Command(SweepCommand):
    help = (
        "Sync each OneRoster zip, or folder holding manifest.csv, put in ROSTER_DROP_DIR once "
        "it has stopped changing: it is moved into ROSTER_DROP_DIR/taken/ (so taken exactly "
        "once) and synced, printing one line per sync. Unset ROSTER_DROP_DIR: nothing to do. "
        "Run it from cron every minute, or with --every."
    )

    def sweep(self) -> str | None:
        if not settings.ROSTER_DROP_DIR:
            return None
        return "\n".join(roster_drop_sweep(settings.ROSTER_DROP_DIR)) or None
