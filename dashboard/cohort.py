"""Keep the dashboard's read model (dashboard.models) in step with the stored results."""

from collections.abc import Iterable, Iterator
from datetime import datetime
from itertools import groupby

from django.db import transaction
from django.db.models.functions import Coalesce

from assessments.models import AssessmentResult, FocusArea, needs_help_flagged
from dashboard.models import CohortNeedsHelp, CohortResult

BATCH = 5000


def cohort_refresh(*, learner_ids: Iterable[int]) -> None:
    """Rebuild the read model rows of these learners from their stored results."""
    learner_ids = list(learner_ids)
    with transaction.atomic():
        CohortNeedsHelp.objects.filter(cohort_result__learner_id__in=learner_ids).delete()
        CohortResult.objects.filter(learner_id__in=learner_ids).delete()
        _write(_results().filter(attempt__learner_id__in=learner_ids))


def cohort_rebuild() -> int:
    """Rebuild the whole read model from the stored results; return how many it holds."""
    with transaction.atomic():
        CohortNeedsHelp.objects.all().delete()
        CohortResult.objects.all().delete()
        _write(_results())
    return CohortResult.objects.count()


def refresh_on_result_stored(sender, *, result: AssessmentResult, **kwargs) -> None:
    """Count a freshly stored result (inside the storing transaction: both or neither)."""
    cohort_refresh(learner_ids=[result.attempt.learner_id])


def refresh_on_level_changed(sender, *, learner, **kwargs) -> None:
    """Count a learner's results under their corrected level (inside the change's transaction)."""
    cohort_refresh(learner_ids=[learner.pk])


def _results():
    # A stored result means a completed attempt: delivery stores the result first and marks
    # the attempt completed a moment later, so until then the result's arrival is its time.
    return AssessmentResult.objects.annotate(
        done_at=Coalesce("attempt__completed_at", "received_at"),
    ).order_by("attempt__learner_id", "done_at", "pk")


def _write(results) -> None:
    rows = results.values_list(
        "pk",
        "attempt__learner_id",
        "attempt__learner__level",
        "done_at",
        "risk_level",
        "attempt__learner__school_id",
    ).iterator(chunk_size=BATCH)
    for batch in _learner_batches(rows):
        cohort_rows = list(_superseded(batch))
        CohortResult.objects.bulk_create(cohort_rows, batch_size=1000)
        by_pk = {row.pk: row for row in cohort_rows}
        areas = (
            FocusArea.objects.filter(result_id__in=by_pk)
            .order_by("result_id", "position", "pk")
            .values_list("result_id", "name", "needs_help")
        )
        CohortNeedsHelp.objects.bulk_create(
            (
                CohortNeedsHelp(
                    cohort_result_id=result_id,
                    name=name,
                    level=by_pk[result_id].level,
                    school_id=by_pk[result_id].school_id,
                    completed_at=by_pk[result_id].completed_at,
                    superseded_at=by_pk[result_id].superseded_at,
                )
                for result_id, name in _distinct_flagged(areas)
            ),
            batch_size=1000,
        )


def _learner_batches(rows: Iterator[tuple]) -> Iterator[list[tuple]]:
    """Yield about BATCH rows at a time, never splitting one learner's results."""
    batch: list[tuple] = []
    for _, learner_rows in groupby(rows, key=lambda row: row[1]):
        batch.extend(learner_rows)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _superseded(batch: list[tuple]) -> Iterator[CohortResult]:
    """Yield read model rows, each knowing when the same learner's next result came."""
    for _, learner_rows in groupby(batch, key=lambda row: row[1]):
        learner_rows = list(learner_rows)
        later: list[datetime | None] = [row[3] for row in learner_rows[1:]] + [None]
        for (pk, learner_id, level, done_at, risk, school_id), next_at in zip(
            learner_rows, later, strict=True
        ):
            yield CohortResult(
                result_id=pk,
                learner_id=learner_id,
                level=level or "",
                school_id=school_id,
                completed_at=done_at,
                superseded_at=next_at,
                risk_level=risk,
            )


def _distinct_flagged(areas) -> Iterator[tuple[int, str]]:
    """Yield (result, area name) once per area needing help, however often it is listed."""
    seen: set[tuple[int, str]] = set()
    for result_id, name, needs_help in areas:
        if needs_help_flagged(needs_help) and (result_id, name) not in seen:
            seen.add((result_id, name))
            yield result_id, name
