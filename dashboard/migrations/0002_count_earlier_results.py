"""Count the results stored before the dashboard's read model existed.

Later results are counted by the `result_stored` receiver (dashboard.cohort).
"""

from itertools import groupby

from django.db import migrations
from django.db.models.functions import Coalesce

BATCH = 5000


def count_earlier_results(apps, schema_editor):
    # A copy of dashboard.cohort.cohort_rebuild as it stood for these tables (0003 gave them a
    # school): the read model is derived data, rebuilt from the stored results.
    AssessmentResult = apps.get_model("assessments", "AssessmentResult")
    FocusArea = apps.get_model("assessments", "FocusArea")
    CohortResult = apps.get_model("dashboard", "CohortResult")
    CohortNeedsHelp = apps.get_model("dashboard", "CohortNeedsHelp")
    CohortNeedsHelp.objects.all().delete()
    CohortResult.objects.all().delete()
    rows = (
        AssessmentResult.objects.annotate(done_at=Coalesce("attempt__completed_at", "received_at"))
        .order_by("attempt__learner_id", "done_at", "pk")
        .values_list("pk", "attempt__learner_id", "attempt__learner__level", "done_at", "risk_level")
    )
    batch = []
    for _, learner_rows in groupby(rows.iterator(chunk_size=BATCH), key=lambda row: row[1]):
        learner_rows = list(learner_rows)
        later = [row[3] for row in learner_rows[1:]] + [None]
        for (pk, learner_id, level, done_at, risk), next_at in zip(learner_rows, later):
            batch.append(
                CohortResult(
                    result_id=pk,
                    learner_id=learner_id,
                    level=level or "",
                    completed_at=done_at,
                    superseded_at=next_at,
                    risk_level=risk,
                )
            )
        if len(batch) >= BATCH:
            _write(batch, FocusArea, CohortResult, CohortNeedsHelp)
            batch = []
    if batch:
        _write(batch, FocusArea, CohortResult, CohortNeedsHelp)


def _write(batch, FocusArea, CohortResult, CohortNeedsHelp):
    CohortResult.objects.bulk_create(batch, batch_size=1000)
    by_pk = {row.result_id: row for row in batch}
    areas = (
        FocusArea.objects.filter(result_id__in=by_pk)
        .order_by("result_id", "position", "pk")
        .values_list("result_id", "name", "needs_help")
    )
    seen = set()
    flagged = []
    for result_id, name, needs_help in areas:
        # "no", in any case, is the only all-clear (assessments.models.needs_help_flagged).
        if needs_help.strip().lower() != "no" and (result_id, name) not in seen:
            seen.add((result_id, name))
            row = by_pk[result_id]
            flagged.append(
                CohortNeedsHelp(
                    cohort_result_id=result_id,
                    name=name,
                    level=row.level,
                    completed_at=row.completed_at,
                    superseded_at=row.superseded_at,
                )
            )
    CohortNeedsHelp.objects.bulk_create(flagged, batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0001_cohort_read_model"),
        ("assessments", "0003_attempt_latest_index"),
    ]

    operations = [migrations.RunPython(count_earlier_results, migrations.RunPython.noop)]
