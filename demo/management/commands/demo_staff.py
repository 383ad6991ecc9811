"""Create the demo staff account for `make run` and print how to sign in."""

import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

from portal.access import STAFF_GROUP

DEMO_USERNAME = "demo-staff"
# The generated password is kept beside the development database (and ignored by git) so
# that every `make run` prints the same one and open browsers stay signed in.
PASSWORD_FILE = Path(settings.BASE_DIR) / ".demo-staff-password"


class Command(BaseCommand):
    help = "Create the demo partner-staff account if needed and print its credentials."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--reset", action="store_true", help="Choose a new password.")

    def handle(self, *args, reset: bool, **options) -> None:
        user, _ = get_user_model().objects.get_or_create(username=DEMO_USERNAME)
        password = None if reset else _saved_password()
        if password is None or not user.check_password(password):
            # Random for each new database: nothing guessable ships with the code.
            password = secrets.token_urlsafe(12)
            user.set_password(password)
            _save_password(password)
        user.is_active = True
        user.save()
        user.groups.add(Group.objects.get_or_create(name=STAFF_GROUP)[0])
        self.stdout.write(
            "\n  Demo staff account (for this development portal only):\n"
            f"    username: {DEMO_USERNAME}\n"
            f"    password: {password}\n"
            "  Sign in at http://127.0.0.1:8000/\n"
        )


def _saved_password() -> str | None:
    try:
        return PASSWORD_FILE.read_text().strip() or None
    except OSError:
        return None


def _save_password(password: str) -> None:
    descriptor = os.open(PASSWORD_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(password + "\n")
