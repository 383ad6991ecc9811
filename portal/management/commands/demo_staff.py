"""Create (or reset) the demo staff account for `make run` and print how to sign in."""

import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

from portal.access import STAFF_GROUP

DEMO_USERNAME = "demo-staff"


class Command(BaseCommand):
    help = "Create or reset the demo partner-staff account and print its credentials."

    def handle(self, *args, **options) -> None:
        # A fresh random password each run: nothing guessable ships with the code.
        password = secrets.token_urlsafe(12)
        user, _ = get_user_model().objects.get_or_create(username=DEMO_USERNAME)
        user.set_password(password)
        user.is_active = True
        user.save()
        user.groups.add(Group.objects.get_or_create(name=STAFF_GROUP)[0])
        self.stdout.write(
            "\n  Demo staff account (for this development portal only):\n"
            f"    username: {DEMO_USERNAME}\n"
            f"    password: {password}\n"
            "  Sign in at http://127.0.0.1:8000/\n"
        )
