"""Seed a demo cohort through the sandbox upstream, only into a portal with no learners."""

import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from demo.management.commands.demo_staff import DEMO_USERNAME
from demo.seeding import demo_cohort_seed, wait_for_upstream
from learners.models import Learner


class Command(BaseCommand):
    help = (
        "When the portal has no learners, register a demo cohort through the upstream (the "
        "sandbox), take their assessments and open follow-ups, so every page has something "
        "to show. Does nothing when learners exist."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--learners", type=int, default=40, help="How many (default 40).")
        parser.add_argument(
            "--wait", type=float, default=30, help="Seconds to wait for the upstream (30)."
        )
        parser.add_argument("--seed", type=int, default=2026, help="Random seed (2026).")

    def handle(self, *args, learners: int, wait: float, seed: int, **options) -> None:
        if learners < 1:
            raise CommandError("--learners must be at least 1.")
        if Learner.objects.exists():
            self.stdout.write("Demo cohort: learners already exist, so nothing was seeded.")
            return
        self.stdout.write("Demo cohort: waiting for the assessment service (sandbox)...")
        if not wait_for_upstream(timeout=wait):
            raise CommandError(
                f"The assessment service did not answer within {wait:g} seconds, so no demo "
                "cohort was seeded. Start the sandbox (manage.py sandbox) and run seed_demo again."
            )
        staff = get_user_model().objects.filter(username=DEMO_USERNAME).first()
        if staff is None:
            call_command("demo_staff", stdout=self.stdout)
            staff = get_user_model().objects.get(username=DEMO_USERNAME)
        self.stdout.write(f"Demo cohort: registering {learners} learners through {_host()}...")
        started = time.monotonic()
        summary, password = demo_cohort_seed(staff=staff, count=learners, seed=seed)
        seconds = time.monotonic() - started
        registered = sum(summary.learners.values())
        levels = ", ".join(f"{n} {label.lower()}" for label, n in sorted(summary.learners.items()))
        statuses = ", ".join(f"{n} {label.lower()}" for label, n in summary.follow_ups.items())
        self.stdout.write(
            f"\n  Demo cohort seeded in {seconds:.0f} s: {registered} learners ({levels}).\n"
            f"    assessments completed: {summary.completed}, in progress: "
            f"{summary.in_progress}; learners not started: {summary.not_started}\n"
            f"    follow-ups: {sum(summary.follow_ups.values())} ({statuses or 'none'}), "
            f"{summary.assigned} assigned\n"
            f"  Every demo learner signs in with the same password (a demo only: never do "
            f"this for real learners):\n"
            f"    username: {summary.usernames[0] if summary.usernames else '-'} (or any other "
            f"on the Learners page)\n"
            f"    password: {password}\n"
        )
        for failure in summary.failures:
            self.stderr.write(f"  Not registered: {failure}")


def _host() -> str:
    return settings.PARTNER_API_BASE_URL.split("/plapi")[0]
