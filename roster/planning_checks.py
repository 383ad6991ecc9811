"""A pupil's row of users.csv checked with the single registration form's rules.

The form's own fields check names (kit.names), the email and the date of birth; a pupil also
needs a level, from their grades by the school's table (roster.grades).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.core.exceptions import ValidationError

from learners.forms import LearnerRegistrationForm, dob_plausible
from roster.grades import grade_level
from roster.records import Person
from schools.models import PartnerSettings

FIELDS = LearnerRegistrationForm.base_fields
# The registration form's fields: the Person attribute and users.csv column each is read from.
COLUMNS = {
    "first_name": ("given_name", "givenName"),
    "last_name": ("family_name", "familyName"),
    "email": ("email", "email"),
}


def grade_level_of(person: Person, table: dict[str, str], settings: PartnerSettings) -> str | None:
    """Return a pupil's level by the school's table of grades, or None."""
    return grade_level(
        person.grades, table=table, further_education=settings.roster_further_education
    )


def field_problem(column: str, error: ValidationError) -> str:
    return f"{column}: {' '.join(error.messages)}"


@dataclass
class Checked:
    """A pupil's row with the registration form's rules applied."""

    level: str
    grade: str
    first_name: str
    last_name: str
    email: str
    dob: date
    problems: list[str]


def pupil_checked(person: Person, table: dict[str, str], settings: PartnerSettings) -> Checked:
    """Return a pupil's row checked by the single registration form's rules."""
    problems = []
    level = grade_level_of(person, table, settings)
    if level is None:
        grades = ", ".join(person.grades)
        problems.append(
            f"grades: no level for the grade {grades}: set it on /roster/grades/."
            if grades
            else "grades: the pupil has no grade, so no level: give one in the school's "
            "records, or make the school a further-education college on /roster/grades/."
        )
    values = {}
    for name, (attribute, column) in COLUMNS.items():
        try:
            values[name] = FIELDS[name].clean(getattr(person, attribute))
        except ValidationError as error:
            problems.append(field_problem(column, error))
            values[name] = ""
    if person.birth_date is None:
        problems.append(
            "birthDate: the pupil has no date of birth in demographics.csv; OneRoster "
            "requires one for every student."
        )
    else:
        try:
            dob_plausible(person.birth_date)
        except ValidationError as error:
            problems.append(field_problem("birthDate", error))
    grade = person.grades[0].strip() if person.grades else ""
    return Checked(level or "", grade, dob=person.birth_date, problems=problems, **values)
