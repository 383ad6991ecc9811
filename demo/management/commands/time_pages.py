"""Time the staff pages that must stay fast at scale, and explain their SQL on PostgreSQL."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from demo.page_timing import STAFF_PAGES, pages_time, timing_staff_user, timings_markdown


class Command(BaseCommand):
    help = (
        "Request the learner list (plain, deep page, searches, level filter), the dashboard "
        "and the follow-up queue as a staff member through the test client; print p50/p95 "
        "in ms and, with --explain on PostgreSQL, EXPLAIN (ANALYZE, BUFFERS) of each query."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--runs", type=int, default=50, help="Requests per page.")
        parser.add_argument(
            "--page", action="append", metavar="LABEL",
            help="Only this page (repeatable); labels: " + "; ".join(STAFF_PAGES),
        )  # fmt: skip
        parser.add_argument("--explain", action="store_true", help="Add the query plans.")
        parser.add_argument("--output", type=Path, help="Write the Markdown to this file too.")

    def handle(self, *args, runs: int, page, explain: bool, output: Path | None, **options):
        pages = STAFF_PAGES
        if page:
            unknown = set(page) - set(STAFF_PAGES)
            if unknown:
                raise CommandError(f"Unknown page label(s): {', '.join(sorted(unknown))}.")
            pages = {label: STAFF_PAGES[label] for label in page}
        if runs < 1:
            raise CommandError("--runs must be 1 or more.")
        timings = pages_time(pages, user=timing_staff_user(), runs=runs)
        markdown = timings_markdown(timings, explain=explain)
        self.stdout.write(markdown)
        if output:
            output.write_text(markdown)
