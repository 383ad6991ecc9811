"""The learner list as CSV: audited when it starts, its rows streamed in chunks (flat memory)."""

from collections.abc import Iterator

from django.contrib.auth.models import AbstractBaseUser

from audit.models import AuditEvent
from audit.services import audit_record
from learners.models import Level
from learners.selectors import learner_list

CHUNK_SIZE = 2000
# Level names are for people: translated, as the file streams out, into the language of the
# request (portal.csv_export); the column headers, a data interface, are not.
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
]


def learner_list_export(
    *, query: str, level: str, exported_by: AbstractBaseUser, address: str | None
) -> Iterator[tuple]:
    """Audit an export of the learner list's search and return its rows."""
    audit_record(
        actor=exported_by,
        address=address,
        action=AuditEvent.Action.LEARNERS_EXPORTED,
        q=query,
        level=level,
    )
    return learner_export_rows(query=query, level=level)


def learner_export_rows(*, query: str = "", level: str = "") -> Iterator[tuple]:
    """Yield one row per learner of the list's search, erased learners left out."""
    # learner_list already holds only active learners: an erased one has nothing to export.
    rows = (
        learner_list(query=query, level=level)
        .order_by("last_name", "first_name", "username", "pk")
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
        )
        .iterator(chunk_size=CHUNK_SIZE)
    )
    for row in rows:
        yield (*row[:5], LEVEL_NAMES.get(row[5], row[5]), *row[6:])
