"""A school's table of grades and levels, and what the roster makes for its pupils (audited)."""

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from audit.models import AuditEvent
from audit.services import audit_record
from schools.models import PartnerSettings

GRADE_FIELDS = ("roster_grade_levels", "roster_further_education", "roster_made_passwords")


@transaction.atomic
def roster_grades_update(
    *,
    school_id: int,
    changed_by: AbstractBaseUser | None,
    address: str | None,
    grade_levels: str,
    further_education: bool,
    made_passwords: bool,
) -> list[str]:
    """Save a school's roster settings; return the fields that changed (audited when any did).

    Saving drops the school's cached settings (schools.apps), so every process reads the new ones.
    """
    PartnerSettings.load(school_id)  # made with the defaults the first time
    current = PartnerSettings.objects.select_for_update().get(school_id=school_id)
    wanted = dict(zip(GRADE_FIELDS, (grade_levels, further_education, made_passwords), strict=True))
    changes = {name: value for name, value in wanted.items() if getattr(current, name) != value}
    if changes:
        for name, value in changes.items():
            setattr(current, name, value)
        current.save()
        audit_record(
            actor=changed_by,
            address=address,
            action=AuditEvent.Action.ROSTER_GRADES_CHANGED,
            school=school_id,
            **changes,
        )
    return list(changes)
