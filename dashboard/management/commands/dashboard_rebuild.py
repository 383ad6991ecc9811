"""Rebuild the dashboard's read model from the stored results (after a bulk data load)."""

import time

from django.core.management.base import BaseCommand

from dashboard.cohort import cohort_rebuild


class Command(BaseCommand):
    help = (
        "Rebuild the cohort dashboard's counts from the stored results. Results stored by the "
        "portal are counted as they arrive; run this after loading results any other way."
    )

    def handle(self, *args, **options) -> None:
        started = time.monotonic()
        rows = cohort_rebuild()
        seconds = time.monotonic() - started
        self.stdout.write(self.style.SUCCESS(f"Counted {rows:,} results in {seconds:.1f} s."))
