"""`manage.py restore FILE` (`make restore FILE=...`): load a dump into an empty database."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from ops.backups import BackupError, restore


class Command(BaseCommand):
    help = (
        "Load a `manage.py backup` dump into the database DATABASE_URL names, which must be "
        "empty (it is created if missing)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", type=Path, help="The .dump file `make backup` wrote.")

    def handle(self, *args, file: Path, **options) -> None:
        db = settings.DATABASES["default"]
        try:
            restore(db, file)
        except BackupError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Restored {file} into the database {db['NAME']}.")
        self.stdout.write(
            "Before the portal serves it, empty its cache (redis-cli -n <db> flushdb, or a new "
            "CACHE_KEY_PREFIX): it holds copies of sessions, users and settings from before."
        )
