"""Add a staff account with a role, for scripts and first set-up."""

import getpass
import os
import sys

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_email
from django.db import transaction

from accounts.access import assigned_role
from accounts.models import StaffRole
from classes.models import SchoolGroup, current_academic_year
from classes.services import group_create
from learners.forms import username_in_normal_form
from staff.services import staff_add, staff_change, staff_password_set

PASSWORD_VARIABLE = "STAFF_PASSWORD"


class Command(BaseCommand):
    help = (
        "Add a staff account with a role (or update an existing staff account's role, email, "
        f"groups and password). The password comes from ${PASSWORD_VARIABLE}, else a prompt."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument("--email", required=True)
        parser.add_argument("--role", required=True, choices=StaffRole.values)
        parser.add_argument(
            "--group",
            action="append",
            default=[],
            metavar="NAME",
            help="A group of this academic year the account works with (repeat for several); "
            "made as a teaching class (a year group for a head of year) if it does not exist.",
        )

    def handle(self, *args, username: str, email: str, role: str, group: list[str], **options):
        try:
            # Stored in the normal form sign-in looks for (accounts.usernames).
            username = username_in_normal_form(username)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        try:
            validate_email(email)
        except ValidationError:
            raise CommandError(f"{email!r} is not an email address.") from None
        existing = get_user_model().objects.filter(username=username).first()
        # Never a learner's account, even one that can no longer sign in.
        if existing is not None and assigned_role(existing) is None:
            raise CommandError(
                f"{username} is already an account that is not staff (a learner's, perhaps)."
            )
        password = self._password(existing, username)
        with transaction.atomic():
            groups = [self._group(name, role) for name in group]
            if existing is None:
                staff_add(
                    username=username,
                    email=email,
                    role=role,
                    password=password,
                    groups=groups,
                    added_by=None,
                    address=None,
                )
                self.stdout.write(f"Added {username} as {StaffRole(role).label}.")
                return
            current = set(existing.school_groups.all())
            staff_change(
                user=existing,
                role=role,
                groups=current | set(groups),
                email=email,
                is_active=True,
                changed_by=None,
                address=None,
            )
            if password is not None:
                staff_password_set(user=existing, password=password, changed_by=None, address=None)
        self.stdout.write(f"Updated {existing.get_username()}: {StaffRole(role).label}.")

    def _password(self, existing, username: str) -> str | None:
        """Return the password to set: from the environment, a prompt, or None to keep it."""
        password = os.environ.get(PASSWORD_VARIABLE)
        if password is None:
            if not sys.stdin.isatty():
                if existing is not None:
                    return None  # an update from a script keeps the account's password
                raise CommandError(f"Set {PASSWORD_VARIABLE}, or run this in a terminal.")
            password = getpass.getpass("Password: ")
            if password != getpass.getpass("Password (again): "):
                raise CommandError("The two passwords differ.")
        user = existing or get_user_model()(username=username)
        try:
            validate_password(password, user)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        return password

    def _group(self, name: str, role: str) -> SchoolGroup:
        """Return this year's group of that name, made if there is none yet."""
        year = current_academic_year()
        group = SchoolGroup.objects.filter(name__iexact=name.strip(), academic_year=year).first()
        if group is not None:
            return group
        kind = (
            SchoolGroup.Kind.YEAR_GROUP
            if role == StaffRole.HEAD_OF_YEAR
            else SchoolGroup.Kind.TEACHING_CLASS
        )
        group = group_create(
            name=name.strip(),
            level="",
            kind=kind,
            academic_year=year,
            created_by=None,
            address=None,
        )
        self.stdout.write(f"Made the group {group.name} ({year}); set its level on its page.")
        return group
