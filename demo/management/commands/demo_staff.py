"""Create the demo staff accounts for `make run` and print how to sign in."""

import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from demo.trust import (
    DEMO_ADMIN_USERNAME,
    DEMO_USERNAME,
    PRIMARY_LEAD_USERNAME,
    TRUST_ADMIN_USERNAME,
    TRUST_LEAD_USERNAME,
    demo_schools,
    demo_trust_staff,
)
from safeguarding.models import Alert
from safeguarding.services import alert_acknowledge, alert_raise_test
from schools.context import working_in

__all__ = ["DEMO_ADMIN_USERNAME", "DEMO_USERNAME", "PASSWORD_FILE"]

# The generated password is kept beside the development database (and ignored by git) so
# that every `make run` prints the same one and open browsers stay signed in.
PASSWORD_FILE = Path(settings.BASE_DIR) / ".demo-staff-password"


class Command(BaseCommand):
    help = (
        "Create the demo trust (two schools) and its staff accounts if needed, and print "
        "their credentials."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--reset", action="store_true", help="Choose a new password.")

    def handle(self, *args, reset: bool, **options) -> None:
        user, _ = get_user_model().objects.get_or_create(username=DEMO_USERNAME)
        password = None if reset else _saved_password()
        if password is None or not user.check_password(password):
            # Random for each new database: nothing guessable ships with the code.
            password = secrets.token_urlsafe(12)
            _save_password(password)
        # One password for every account: the demo is for this development portal only.
        trust = demo_schools()
        users = demo_trust_staff(trust, password=password)
        # Each school's leads have checked their alerts reach them, as a school would.
        with working_in(trust.secondary.pk):
            _demo_lead_checked(users[DEMO_USERNAME])
        with working_in(trust.primary.pk):
            _demo_lead_checked(users[PRIMARY_LEAD_USERNAME])
        primary, secondary = trust.primary, trust.secondary
        self.stdout.write(
            "\n  Demo trust: "
            f"{secondary.name} ({secondary.code}, secondary) and {primary.name} "
            f"({primary.code}, primary).\n"
            "  Demo staff accounts (for this development portal only):\n"
            f"    {DEMO_USERNAME} (safeguarding lead in both schools: every result and "
            "follow-up)\n"
            f"    {DEMO_ADMIN_USERNAME} (partner admin in both schools: staff accounts, classes, "
            "settings)\n"
            f"    {PRIMARY_LEAD_USERNAME} ({primary.name}'s own safeguarding lead)\n"
            f"    {TRUST_ADMIN_USERNAME} (trust admin: every school, the trust's figures)\n"
            f"    {TRUST_LEAD_USERNAME} (trust safeguarding lead: alerts a school's leads "
            "leave unacknowledged)\n"
            f"    password for all: {password}\n"
            "  Sign in at http://127.0.0.1:8000/\n"
        )


def _demo_lead_checked(lead) -> None:
    """Give a demo lead an acknowledged test alert, as a school would."""
    test = Alert.objects.filter(kind=Alert.Kind.TEST, test_recipient=lead).first()
    if test is None:
        test = alert_raise_test(lead=lead)
    if test.acknowledged_at is None:
        alert_acknowledge(alert=test, by=lead, address=None)


def _saved_password() -> str | None:
    try:
        return PASSWORD_FILE.read_text().strip() or None
    except OSError:
        return None


def _save_password(password: str) -> None:
    descriptor = os.open(PASSWORD_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(password + "\n")
