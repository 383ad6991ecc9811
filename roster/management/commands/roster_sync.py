"""`manage.py roster_sync PATH [--school CODE]` and `roster_sync --approve N`, for scripts."""

import logging
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from ops.database import DATABASE_TROUBLE
from roster.models import RosterSync
from roster.services import RosterSyncClosed, roster_sync_approve, roster_sync_start
from schools.models import School

logger = logging.getLogger(__name__)

# The error itself is logged (roster.services); it may hold pupils' details.
DATABASE_FAILED = (
    "The database failed (busy, locked or out of reach) while syncing: nothing changed. "
    "Run the command again in a minute."
)
UNEXPECTED_FAILURE = (
    "roster sync {number} failed unexpectedly while being applied: nothing changed. Tell the "
    "portal's administrators (the log says why)."
)


class Command(BaseCommand):
    help = (
        "Sync the school's records from a OneRoster file set (a zip or a folder): apply it, or "
        "hold it for an admin when it looks wrong. Prints one line: 'roster sync N: "
        "applied|held: J joined, L left, C changed, P problems'. --approve N applies a held one."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", nargs="?", help="The roster: a .zip file or a folder.")
        parser.add_argument("--school", metavar="CODE", help="Sync only this school's records.")
        parser.add_argument(
            "--approve", type=int, metavar="N", help="Apply the held roster sync number N."
        )

    def handle(self, *args, path: str | None, school: str | None, approve: int | None, **options):
        if approve is not None:
            if path:
                raise CommandError("Give either a roster to sync or --approve N, not both.")
            sync = self._approve(approve)
        elif not path:
            raise CommandError("Name the roster to sync (a .zip file or a folder), or --approve N.")
        else:
            sync = self._start(Path(path), school)
        self.stdout.write(sync.summary_line())

    def _start(self, path: Path, code: str | None) -> RosterSync:
        chosen = None
        if code is not None:
            chosen = School.objects.filter(code__iexact=code.strip()).first()
            if chosen is None:
                codes = ", ".join(School.objects.order_by("code").values_list("code", flat=True))
                raise CommandError(
                    f"There is no school with the code {code!r}. The codes are: {codes}."
                )
        if not path.exists():
            raise CommandError(f"There is no file or folder {str(path)!r}.")
        try:
            sync = roster_sync_start(
                source=path, origin=RosterSync.Origin.COMMAND, filename=path.name, school=chosen
            )
        except DatabaseError:
            raise CommandError(DATABASE_FAILED) from None
        if sync.state == RosterSync.State.FAILED:
            raise CommandError(f"roster sync {sync.pk}: the roster could not be read: {sync.error}")
        return sync

    def _approve(self, number: int) -> RosterSync:
        sync = RosterSync.objects.filter(pk=number).first()
        if sync is None:
            raise CommandError(f"There is no roster sync {number}.")
        try:
            return roster_sync_approve(sync=sync, approved_by=None, address=None)
        except RosterSyncClosed as closed:
            raise CommandError(closed.message) from None
        except DATABASE_TROUBLE:
            raise CommandError(DATABASE_FAILED) from None
        except Exception:
            # Rolled back whole (still held); the traceback may hold pupils' details.
            logger.exception("Roster sync %s failed while approved by the command", number)
            raise CommandError(UNEXPECTED_FAILURE.format(number=number)) from None
