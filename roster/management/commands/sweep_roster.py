"""Take up roster syncs whose worker died; take the drop folder's file sets, each once."""

from django.conf import settings

from ops.sweep import SweepCommand
from roster.background import roster_syncs_recover
from roster.drop import roster_drop_sweep


class Command(SweepCommand):
    help = (
        "Fail a roster sync whose worker died reading it, or apply again one it died applying "
        "(silent for 10 minutes). Then sync each OneRoster zip, or folder holding manifest.csv, "
        "put in ROSTER_DROP_DIR once it has stopped changing: it is moved into "
        "ROSTER_DROP_DIR/taken/ (so taken exactly once) and synced, printing one line per "
        "sync. Run it from cron every minute, or with --every."
    )

    def sweep(self) -> str | None:
        lines = roster_syncs_recover()
        if settings.ROSTER_DROP_DIR:
            lines += roster_drop_sweep(settings.ROSTER_DROP_DIR)
        return "\n".join(lines) or None
