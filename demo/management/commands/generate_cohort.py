"""Generate a large local cohort (learners, attempts, results) to measure the portal at scale."""

from django.core.management.base import BaseCommand, CommandError

from demo.generator import cohort_clear, generate_cohort
from learners.models import Learner


class Command(BaseCommand):
    help = (
        "Generate learners with sign-in accounts, assessment attempts, results, focus areas "
        "and follow-ups in the local database only (nothing goes upstream). --clear removes "
        "generated rows and nothing else."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--learners", type=int, default=1000, help="How many learners.")
        parser.add_argument("--attempts", type=int, default=3000, help="How many attempts.")
        parser.add_argument("--seed", type=int, default=1, help="Same seed, same data.")
        parser.add_argument("--batch", type=int, default=5000, help="Learners written per batch.")
        parser.add_argument(
            "--password",
            help="One password for every generated learner (default: a random one nobody knows).",
        )
        parser.add_argument(
            "--yes", action="store_true", help="Add to a database that already has learners."
        )
        parser.add_argument(
            "--clear", action="store_true", help="Delete the generated learners and their records."
        )

    def handle(self, *args, **options) -> None:
        if options["clear"]:
            removed = cohort_clear(stdout=self.stdout)
            self.stdout.write(self.style.SUCCESS(f"Deleted {removed:,} generated learners."))
            return
        if options["learners"] < 0 or options["attempts"] < 0 or options["batch"] < 1:
            raise CommandError("--learners and --attempts must be 0 or more, --batch 1 or more.")
        if options["attempts"] and not options["learners"]:
            raise CommandError("Attempts need learners: give --learners too.")
        existing = Learner.objects.count()
        if existing and not options["yes"]:
            raise CommandError(
                f"The database already has {existing:,} learners. Add --yes to generate more "
                "beside them, or --clear to remove earlier generated ones first."
            )
        self.stdout.write(
            f"Generating {options['learners']:,} learners and {options['attempts']:,} attempts "
            "(local data only)..."
        )
        counts = generate_cohort(
            options["learners"],
            options["attempts"],
            options["seed"],
            self.stdout,
            batch=options["batch"],
            password=options["password"],
        )
        seconds = counts.pop("seconds")
        rows = ", ".join(f"{label.split('.')[-1]} {count:,}" for label, count in counts.items())
        self.stdout.write(self.style.SUCCESS(f"Done in {seconds} s: {rows}."))
