"""Adding the partner's schools: each with its settings made with the defaults."""

from dataclasses import dataclass

from django.db import transaction

from schools.models import PartnerSettings, School

CODE_MAX_LENGTH = School._meta.get_field("code").max_length
NAME_MAX_LENGTH = School._meta.get_field("name").max_length


class SchoolRefused(Exception):
    """A code or name a school cannot have; the message says why."""


@dataclass(frozen=True)
class SchoolAdded:
    """What `school_add` did: the school, whether it is new, and its name before if renamed."""

    school: School
    created: bool
    former_name: str = ""


def school_with_code(code: str) -> School | None:
    """Return the school with this code (spaces around it and capitals ignored), or None."""
    code = code.strip()
    return School.objects.filter(code__iexact=code).first() if code else None


@transaction.atomic
def school_add(*, code: str, name: str) -> SchoolAdded:
    """Add a school with its default settings; a known code keeps its school, renamed if asked.

    Codes are matched ignoring capitals, as commands and roster files write them.
    """
    code, name = code.strip(), " ".join(name.split())
    if not code:
        raise SchoolRefused("A school needs a code (its URN, for example).")
    if not name:
        raise SchoolRefused("A school needs a name.")
    if len(code) > CODE_MAX_LENGTH:
        raise SchoolRefused(f"A school's code has at most {CODE_MAX_LENGTH} characters.")
    if len(name) > NAME_MAX_LENGTH:
        raise SchoolRefused(f"A school's name has at most {NAME_MAX_LENGTH} characters.")
    school = School.objects.select_for_update().filter(code__iexact=code).first()
    if school is None:
        school = School.objects.create(code=code, name=name)
        added = SchoolAdded(school=school, created=True)
    elif school.name != name:
        added = SchoolAdded(school=school, created=False, former_name=school.name)
        school.name = name
        school.save(update_fields=["name"])
    else:
        added = SchoolAdded(school=school, created=False)
    PartnerSettings.objects.get_or_create(school=school)
    return added
