"""`manage.py backup` (`make backup`): dump the PostgreSQL database into BACKUP_DIR."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from ops.backups import BackupError, backup


class Command(BaseCommand):
    help = "Write a PostgreSQL dump (pg_dump custom format) of the portal's database."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--dir", type=Path, default=None,
            help="Where to write it (default: BACKUP_DIR, backups/).",
        )  # fmt: skip

    def handle(self, *args, dir: Path | None, **options) -> None:
        directory = Path(dir or settings.BACKUP_DIR)
        try:
            written = backup(settings.DATABASES["default"], directory)
        except BackupError as error:
            raise CommandError(str(error)) from None
        size = written.stat().st_size
        self.stdout.write(f"Backup written to {written} ({size:,} bytes).")
