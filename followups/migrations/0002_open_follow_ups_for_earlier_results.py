"""Open follow-ups for results stored before follow-ups existed.

Historical models cannot call `followups.services`; this is a frozen copy of
`followups_open_missing` as it stood when follow-ups were introduced. Later results get their
items from the `result_stored` receiver.
"""

from datetime import timedelta

from django.conf import settings
from django.db import migrations
from django.utils import timezone

RISK_RANKS = {"high": 3, "moderate": 2, "medium": 2, "low": 1}


def open_missing(apps, schema_editor):
    AssessmentResult = apps.get_model("assessments", "AssessmentResult")
    FocusArea = apps.get_model("assessments", "FocusArea")
    FollowUp = apps.get_model("followups", "FollowUp")
    FollowUpArea = apps.get_model("followups", "FollowUpArea")
    due_days = getattr(settings, "FOLLOW_UP_DUE_DAYS", 7)
    results = (
        AssessmentResult.objects.filter(
            attempt__state="completed",
            attempt__follow_up__isnull=True,
            attempt__learner__status="active",
        )
        .select_related("attempt")
        .order_by("pk")
    )
    for result in results.iterator(chunk_size=500):
        areas = FocusArea.objects.filter(result=result).order_by("position", "id")
        names = list(
            dict.fromkeys(a.name for a in areas if a.needs_help.strip().lower() != "no")
        )
        if not names:
            continue
        # The item counts from when the result arrived, so old ones show as overdue.
        follow_up = FollowUp.objects.create(
            learner_id=result.attempt.learner_id,
            attempt_id=result.attempt_id,
            risk_level=result.risk_level,
            risk_rank=RISK_RANKS.get(result.risk_level.strip().lower(), 0),
            due_date=timezone.localdate(result.received_at) + timedelta(days=due_days),
        )
        FollowUpArea.objects.bulk_create(
            FollowUpArea(follow_up=follow_up, name=name) for name in names
        )


class Migration(migrations.Migration):
    dependencies = [("followups", "0001_follow_up_queue")]

    operations = [migrations.RunPython(open_missing, migrations.RunPython.noop)]
