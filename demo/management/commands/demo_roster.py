"""Write a OneRoster zip of the demo trust's records, to try School records (`/roster/`)."""

from pathlib import Path

from django.core.management.base import BaseCommand

from demo.oneroster import demo_spec, roster_write
from demo.seeding import FIRST_NAMES, LAST_NAMES


class Command(BaseCommand):
    help = (
        "Write the demo trust's records as a OneRoster zip: Oak Primary's Year 5 and two Year 8 "
        "classes at Ash Academy, with their teachers. --without N leaves N of Ash's pupils out, "
        "as a file that lost them would (a sync that looks wrong is held)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", help="Where to write the zip, e.g. /tmp/roster.zip")
        parser.add_argument("--oneroster", choices=["1.1", "1.2"], default="1.2", dest="version")
        parser.add_argument("--without", type=int, default=0, metavar="N")

    def handle(self, *args, path: str, version: str, without: int, **options) -> None:
        spec = demo_spec(first_names=FIRST_NAMES, last_names=LAST_NAMES)
        ash = [pupil.sourced_id for pupil in spec.pupils if pupil.school == "org-ash"]
        spec = spec.without(*ash[len(ash) - without :]) if without > 0 else spec
        written = roster_write(spec, Path(path).with_suffix(""), version=version, as_zip=True)
        self.stdout.write(
            f"Wrote {written}: {len(spec.pupils)} pupils, {len(spec.classes)} classes, "
            f"{len(spec.teachers)} teachers (OneRoster {version})."
        )
