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

from accounts.access import assigned_role, trust_role
from accounts.models import TRUST_ROLES, StaffRole
from classes.models import SchoolGroup, current_academic_year
from classes.services import group_create
from learners.forms import username_in_normal_form
from schools.context import working_in
from schools.models import School, several_schools
from schools.services import school_with_code
from staff.services import staff_add, staff_change, staff_password_set, staff_trust_role_drop

PASSWORD_VARIABLE = "STAFF_PASSWORD"


class Command(BaseCommand):
    help = (
        "Add a staff account with a role (or update an existing staff account's role, email, "
        f"groups and password). The password comes from ${PASSWORD_VARIABLE}, else a prompt. "
        "A school role (admin, teacher, head_of_year, dsl, deputy_dsl) is held in each school "
        "named with --school (needed when the partner has several schools); run again with "
        "another --school and --role to add a role in another school, the others kept. A trust "
        "role (trust_admin, trust_safeguarding_lead, trust_viewer) is held above every school."
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
            "made as a teaching class (a year group for a head of year) if it does not exist. "
            "Looked up in the school given with --school.",
        )
        parser.add_argument(
            "--school",
            action="append",
            default=[],
            metavar="CODE",
            help="The code of a school the role is held in (repeat for several).",
        )

    def handle(
        self,
        *args,
        username: str,
        email: str,
        role: str,
        group: list[str],
        school: list[str],
        **options,
    ):
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
        schools = self._schools(role, school, group)
        password = self._password(existing, username)
        with transaction.atomic():
            if existing is None:
                self._add(username, email, role, password, schools, group)
                return
            dropped = self._change(existing, email, role, schools, group)
            if password is not None:
                staff_password_set(user=existing, password=password, changed_by=None, address=None)
        self.stdout.write(
            f"Updated {existing.get_username()}: {StaffRole(role).label}{_where(schools)}."
            + (f" No longer {StaffRole(dropped).label}." if dropped else "")
        )

    def _add(self, username, email, role, password, schools: list[School], group) -> None:
        """Make the account with its role in each school (or above them) and its groups."""
        with working_in(schools[0].pk if schools else None):
            groups = [self._group(name, role, schools[0]) for name in group]
            staff_add(
                username=username,
                email=email,
                role=role,
                password=password,
                groups=groups,
                school_ids=[school.pk for school in schools],
                added_by=None,
                address=None,
            )
        self.stdout.write(f"Added {username} as {StaffRole(role).label}{_where(schools)}.")

    def _change(self, user, email, role, schools: list[School], group) -> str | None:
        """Give the account its role in each school (or above them), keeping its other roles.

        A school role given to a trust role's holder ends the trust role (which would
        otherwise stand above it); returns that trust role, else None.
        """
        dropped = None
        if role not in TRUST_ROLES and trust_role(user) is not None and not user.is_superuser:
            dropped = staff_trust_role_drop(user=user, changed_by=None, address=None)
        for school in schools or [None]:
            with working_in(school.pk if school else None):
                groups = [self._group(name, role, school) for name in group]
                # Their groups stay: staff_change works on the groups of the school worked in
                # (every group for a trust role, worked in no school).
                mine = user.school_groups.all()
                current = set(mine.filter(school=school) if school else mine)
                staff_change(
                    user=user,
                    role=role,
                    groups=current | set(groups),
                    email=email,
                    is_active=True,
                    changed_by=None,
                    address=None,
                )
        return dropped

    def _schools(self, role: str, codes: list[str], group: list[str]) -> list[School]:
        """Return the schools the role is held in (none for a trust role), or refuse clearly."""
        if role in TRUST_ROLES:
            if codes or group:
                raise CommandError(
                    f"{StaffRole(role).label} is a trust role, held above every school: "
                    "leave out --school and --group."
                )
            return []
        if not codes:
            if several_schools():
                known = ", ".join(school.code for school in School.everyone())
                raise CommandError(
                    f"The partner has several schools: name the school(s) where the role is "
                    f"held with --school CODE (one of {known})."
                )
            return [School.everyone()[0]]
        found, unknown = [], []
        for code in codes:
            school = school_with_code(code)
            if school is None:
                unknown.append(code)
            elif school not in found:
                found.append(school)
        if unknown:
            raise CommandError(
                f"No school has the code {', '.join(repr(code) for code in unknown)}: "
                "add it with `manage.py add_school CODE --name NAME`."
            )
        if group and len(found) > 1:
            raise CommandError(
                "Groups belong to one school: with --group, name exactly one --school "
                "(run the command once per school)."
            )
        return found

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

    def _group(self, name: str, role: str, school: School | None) -> SchoolGroup:
        """Return this year's group of that name in the school, made there if there is none."""
        year = current_academic_year()
        groups = SchoolGroup.objects.filter(name__iexact=name.strip(), academic_year=year)
        groups = groups.filter(school=school) if school else groups
        group = groups.current().first()
        if group is not None:
            return group
        if groups.archived().exists():
            # Its name is taken this year, and an archived class takes nobody on.
            raise CommandError(
                f"The group {name.strip()} ({year}) is archived (read-only): nobody starts "
                "working with it. Name this year's group instead."
            )
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


def _where(schools: list[School]) -> str:
    """Name the schools a role is held in, once the partner has several (else nothing)."""
    if not schools or not several_schools():
        return ""
    return " in " + " and ".join(f"{school.name} ({school.code})" for school in schools)
