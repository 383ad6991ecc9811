"""The learner list as CSV: audited when it starts, its rows streamed in chunks (flat memory)."""

from collections.abc import Iterator
from itertools import islice

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from accounts.access import sees_results
from audit.models import AuditEvent
from audit.services import audit_record
from classes.filters import current_group_names
from learners.access import visible_learners
from learners.models import Level
from learners.selectors import LearnerListFilters, learner_list

CHUNK_SIZE = 2000
# Level names are for people: translated, as the file streams out, into the language of the
# request (kit.csv_export); the column headers, a data interface, are not.
LEVEL_NAMES = dict(Level.choices)

LEARNER_HEADER = [
    "username",
    "first_name",
    "last_name",
    "email",
    "dob",
    "level",
    "registered_at",
    "latest_assessment_state",
    "latest_risk_level",
    "left_on",  # the day the school's records say they left; empty while at the school
    "classes",  # their classes now, comma-separated (last: files read by position still work)
]


def learner_list_export(
    *, filters: LearnerListFilters, exported_by: AbstractBaseUser, address: str | None
) -> Iterator[tuple]:
    """Audit an export of the learner list's search and filters and return its rows."""
    narrowing = {"status": filters.status, "risk": filters.risk, "needs_help": filters.needs_help}
    audit_record(
        actor=exported_by,
        address=address,
        action=AuditEvent.Action.LEARNERS_EXPORTED,
        q=filters.query,
        level=filters.level,
        **{name: value for name, value in narrowing.items() if value},
        **({"group": filters.group.pk} if filters.group else {}),
    )
    return learner_export_rows(filters=filters, viewer=exported_by)


def learner_export_rows(
    *, filters: LearnerListFilters | None = None, viewer: AbstractBaseUser | None = None
) -> Iterator[tuple]:
    """Yield one row per learner of the list's filters the viewer sees (all when None)."""
    # learner_list already holds only active learners: an erased one has nothing to export.
    learners = learner_list(filters)
    with_results = True
    if viewer is not None:
        learners = visible_learners(viewer, learners)
        with_results = sees_results(viewer)
    rows = (
        learners.order_by("last_name", "first_name", "username", "pk")
        .values_list(
            "username",
            "first_name",
            "last_name",
            "email",
            "dob",
            "level",
            "registered_at",
            "latest_state",
            "latest_risk_level",
            "left_at",
            "pk",
        )
        .iterator(chunk_size=CHUNK_SIZE)
    )
    while chunk := list(islice(rows, CHUNK_SIZE)):
        # One query per chunk for the classes, never one per row.
        classes = current_group_names([row[10] for row in chunk])
        for row in chunk:
            # The column stays, empty, for staff who do not read results: one file layout.
            risk = row[8] if with_results else ""
            left_on = timezone.localdate(row[9]) if row[9] else ""
            level = LEVEL_NAMES.get(row[5], row[5])
            yield (*row[:5], level, row[6], row[7], risk, left_on, classes.get(row[10], ""))
