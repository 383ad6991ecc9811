"""Password slips for the pupils a roster sync registered: printed once per class, then wiped.

A pupil the roster brings gets a made password (imports.passwords keeps it encrypted on their
registration row). It can be printed once, class by class, while the registration's passwords
are kept (IMPORT_CREDENTIALS_TTL after it finished); printing wipes it.
"""

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.views.decorators.debug import sensitive_variables

from audit.models import AuditEvent
from audit.services import audit_record
from classes.models import SchoolGroup
from imports.models import ImportRow
from imports.passwords import password_decrypt
from imports.services import import_credentials_expire
from roster.models import RosterSync
from roster.selectors import sync_import_jobs


@dataclass(frozen=True)
class Slip:
    """One pupil's slip: who, which class, and how they sign in."""

    name: str
    group: str
    username: str
    password: str

    def __repr__(self) -> str:  # never the password, should a slip reach a log
        return f"Slip({self.username!r}, {self.group!r})"


def _rows_waiting(sync: RosterSync, school_id: int | None = None):
    """Return the sync's registered rows whose made password has not been printed yet.

    `school_id`: only that school's registration (a school admin's part of a trust's sync).
    """
    jobs = sync_import_jobs(sync)
    if school_id is not None:
        jobs = jobs.filter(school_id=school_id)
    return ImportRow.objects.filter(
        job__in=jobs, state=ImportRow.State.REGISTERED, password_generated=True
    ).exclude(password_encrypted="")


def roster_slip_groups(
    sync: RosterSync, school_id: int | None = None
) -> list[tuple[SchoolGroup, int]]:
    """Return the classes (not year groups) with slips still to print, and how many each."""
    import_credentials_expire()
    counts: dict[int, int] = {}
    for group_ids in _rows_waiting(sync, school_id).values_list("group_ids", flat=True):
        for group_id in set(group_ids or []):
            counts[group_id] = counts.get(group_id, 0) + 1
    groups = SchoolGroup.objects.filter(pk__in=counts).exclude(kind=SchoolGroup.Kind.YEAR_GROUP)
    return [(group, counts[group.pk]) for group in groups.order_by("name", "pk")]


@sensitive_variables("slips")
def roster_slips_take(
    *,
    sync: RosterSync,
    group: SchoolGroup,
    taken_by: AbstractBaseUser,
    address: str | None,
    school_id: int | None = None,
) -> list[Slip]:
    """Return the slips of a class's pupils once, wiping their passwords (audited by count).

    An empty list when none is left to print (printed already, or expired).
    """
    import_credentials_expire()
    with transaction.atomic():
        rows = [
            row
            for row in _rows_waiting(sync, school_id)
            .select_for_update()
            .order_by("last_name", "first_name")
            if group.pk in (row.group_ids or [])
        ]
        slips = [
            Slip(
                name=f"{row.first_name} {row.last_name}".strip() or row.username,
                group=group.name,
                username=row.username,
                password=password_decrypt(row.password_encrypted),
            )
            for row in rows
        ]
        if not rows:
            return []
        ImportRow.objects.filter(pk__in=[row.pk for row in rows]).update(password_encrypted="")
        audit_record(
            actor=taken_by,
            address=address,
            action=AuditEvent.Action.ROSTER_SLIPS_PRINTED,
            roster_sync=sync.pk,
            group=group.pk,
            slips=len(slips),
        )
    return slips
