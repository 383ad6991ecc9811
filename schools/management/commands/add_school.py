"""Add a school of the partner (idempotent), for scripts and first set-up."""

from django.core.management.base import BaseCommand, CommandError

from schools.models import DEFAULT_SCHOOL_CODE
from schools.services import SchoolRefused, school_add


class Command(BaseCommand):
    help = (
        "Add a school of the partner with its own settings (the defaults), and print it: code, "
        "name, id. Running it again with the same code (capitals ignored) changes nothing, or "
        "renames the school if the name differs. A portal upgraded from one school has that "
        f"school under the code {DEFAULT_SCHOOL_CODE}: adding a school by its URN adds a "
        "second one beside it, which keeps every existing learner; to name the first one, "
        f'run `add_school {DEFAULT_SCHOOL_CODE} --name "Oak Primary"`.'
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("code", help="The school's own reference, e.g. its DfE URN.")
        parser.add_argument("--name", required=True, help="The school's name, as staff know it.")

    def handle(self, *args, code: str, name: str, **options) -> None:
        try:
            added = school_add(code=code, name=name)
        except SchoolRefused as refused:
            raise CommandError(str(refused)) from None
        school = added.school
        if added.created:
            outcome = "added"
        elif added.former_name:
            outcome = f'renamed from "{added.former_name}"'
        else:
            outcome = "already there, unchanged"
        self.stdout.write(f'School {school.code} "{school.name}" (id {school.pk}): {outcome}.')
