"""The results as CSV: audited when it starts, its rows streamed in chunks (flat memory)."""

from collections.abc import Iterator
from itertools import islice

from django.contrib.auth.models import AbstractBaseUser

from assessments.models import FocusArea, needs_help_flagged
from audit.models import AuditEvent
from audit.services import audit_record
from classes.filters import current_group_names
from dashboard.selectors import CohortFilters, completed_results
from learners.exports import CHUNK_SIZE, LEVEL_NAMES
from learners.models import Learner

RESULT_HEADER = [
    "username",
    "first_name",
    "last_name",
    "level",
    "personal_data_erased",
    "assessment_id",
    "assessment_title",
    "offered_at",
    "submitted_at",
    "completed_at",
    "loa_score",
    "risk_level",
    "focus_areas_needing_help",
    "classes",  # the learner's classes now, comma-separated (last: read-by-position still works)
]


def results_export(
    *,
    filters: CohortFilters,
    filter_detail: dict[str, str],
    exported_by: AbstractBaseUser,
    address: str | None,
) -> Iterator[tuple]:
    """Audit an export of the results in the dashboard's filters and return its rows."""
    audit_record(
        actor=exported_by,
        address=address,
        action=AuditEvent.Action.RESULTS_EXPORTED,
        **filter_detail,
    )
    return result_export_rows(filters)


def result_export_rows(filters: CohortFilters) -> Iterator[tuple]:
    """Yield one row per completed attempt in the filters, with its areas needing help."""
    rows = (
        completed_results(filters)
        .order_by("attempt__completed_at", "pk")
        .values_list(
            "pk",
            "attempt__learner_id",
            "attempt__learner__status",
            "attempt__learner__username",
            "attempt__learner__first_name",
            "attempt__learner__last_name",
            "attempt__learner__level",
            "attempt__assessment_id",
            "attempt__title",
            "attempt__offered_at",
            "attempt__submitted_at",
            "attempt__completed_at",
            "loa_score",
            "risk_level",
        )
        .iterator(chunk_size=CHUNK_SIZE)
    )
    while chunk := list(islice(rows, CHUNK_SIZE)):
        # One query per chunk for the focus areas, never one per row.
        areas = _areas_needing_help([row[0] for row in chunk])
        classes = current_group_names([row[1] for row in chunk])
        for pk, learner_id, status, username, first, last, level, *attempt in chunk:
            erased = status == Learner.Status.ERASED
            yield (
                # An erased learner's results stay for counts, without anything naming them.
                "" if erased else username,
                "" if erased else first,
                "" if erased else last,
                LEVEL_NAMES.get(level, level),
                erased,
                *attempt,
                "; ".join(areas.get(pk, [])),
                "" if erased else classes.get(learner_id, ""),
            )


def _areas_needing_help(result_ids: list[int]) -> dict[int, list[str]]:
    """Return the names of the areas needing help per result, in the upstream's order."""
    areas: dict[int, list[str]] = {}
    rows = (
        # Most areas need no help: leave the plain "no" ones in the database.
        FocusArea.objects.filter(result_id__in=result_ids)
        .exclude(needs_help__iexact="no")
        .order_by("result_id", "position", "pk")
        .values_list("result_id", "name", "needs_help")
    )
    for result_id, name, needs_help in rows:
        if needs_help_flagged(needs_help):
            areas.setdefault(result_id, []).append(name)
    return areas
