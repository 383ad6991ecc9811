"""Create the demo staff accounts for `make run` and print how to sign in."""

import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

from accounts.access import STAFF_GROUP
from accounts.models import StaffRole
from accounts.services import staff_role_set
from safeguarding.models import Alert
from safeguarding.services import alert_acknowledge, alert_raise_test

DEMO_USERNAME = "demo-staff"  # the safeguarding lead: every learner, result and follow-up
DEMO_ADMIN_USERNAME = "demo-admin"  # the partner admin: accounts, groups and settings
# Assessments start only once a DSL with an email address exists; under `make run` alert
# emails are printed by the delivery worker, so this address receives nothing real.
DEMO_DSL_EMAIL = "demo-staff@dsl.example"
# The generated password is kept beside the development database (and ignored by git) so
# that every `make run` prints the same one and open browsers stay signed in.
PASSWORD_FILE = Path(settings.BASE_DIR) / ".demo-staff-password"


class Command(BaseCommand):
    help = "Create the demo staff accounts if needed and print their credentials."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--reset", action="store_true", help="Choose a new password.")

    def handle(self, *args, reset: bool, **options) -> None:
        user, _ = get_user_model().objects.get_or_create(username=DEMO_USERNAME)
        password = None if reset else _saved_password()
        if password is None or not user.check_password(password):
            # Random for each new database: nothing guessable ships with the code.
            password = secrets.token_urlsafe(12)
            _save_password(password)
        # One password for both accounts: the demo is for this development portal only.
        for username, role in (
            (DEMO_USERNAME, StaffRole.DSL),
            (DEMO_ADMIN_USERNAME, StaffRole.ADMIN),
        ):
            _demo_account(username, role, password)
        _demo_lead_checked(get_user_model().objects.get(username=DEMO_USERNAME))
        self.stdout.write(
            "\n  Demo staff accounts (for this development portal only):\n"
            f"    {DEMO_USERNAME} (safeguarding lead: every result and follow-up)\n"
            f"    {DEMO_ADMIN_USERNAME} (partner admin: staff accounts, classes, settings)\n"
            f"    password for both: {password}\n"
            "  Sign in at http://127.0.0.1:8000/\n"
        )


def _demo_account(username: str, role: str, password: str) -> None:
    """Make (or mend) one demo account with its role."""
    user, _ = get_user_model().objects.get_or_create(username=username)
    if not user.check_password(password):
        user.set_password(password)
    user.is_active = True
    user.save()
    user.groups.add(Group.objects.get_or_create(name=STAFF_GROUP)[0])
    staff_role_set(user=user, role=role)


def _demo_lead_checked(lead) -> None:
    """Give the demo DSL an email address and an acknowledged test alert, as a school would."""
    if lead.email != DEMO_DSL_EMAIL:
        lead.email = DEMO_DSL_EMAIL
        lead.save(update_fields=["email"])
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
