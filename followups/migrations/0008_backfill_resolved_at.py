"""Say when each follow-up resolved before `resolved_at` existed was resolved.

This is also the re-evaluation of existing holds (issue 32): holds are worked out on every
read (privacy.selectors.hold_of), and `privacy.RecordsHold` stores only staff's own decisions
(a hold placed, the latest lift), which the new rule reads as the old one did; no "held until"
day or flag is stored anywhere. Under the new rule a routine follow-up holds the records only
while open, and the retention period runs from its `resolved_at` (with_last_activity), so an
item resolved earlier needs that time for the rule to count from it rather than from nothing.

The time is the latest audit event (`follow_up_changed`) that changed the status to resolved:
the trail records each change with the item's id and its status after the change. An item
with no such event (resolved before the trail, or through the admin) takes `updated_at`, the
last time anyone touched it: later than or equal to its resolving, so never sooner erased.
"""

from django.db import migrations

RESOLVED = "resolved"


def backfill_resolved_at(apps, schema_editor):
    FollowUp = apps.get_model("followups", "FollowUp")
    AuditEvent = apps.get_model("audit", "AuditEvent")
    items = FollowUp.objects.filter(status=RESOLVED, resolved_at__isnull=True)
    if not items.exists():
        return
    resolved_when = {}
    events = (
        AuditEvent.objects.filter(action="follow_up_changed", detail__status=RESOLVED)
        .order_by("at", "id")
        .values_list("detail", "at")
    )
    for detail, at in events.iterator():
        # A note added to a resolved item repeats the status without changing it.
        if "status" in (detail.get("changed") or []):
            resolved_when[detail.get("follow_up")] = at  # the latest resolving wins
    for pk, updated_at in items.values_list("pk", "updated_at").iterator():
        # update(): leaves updated_at (auto_now) as it was.
        FollowUp.objects.filter(pk=pk).update(resolved_at=resolved_when.get(pk, updated_at))


class Migration(migrations.Migration):
    dependencies = [
        ("followups", "0007_history_and_resolved"),
        ("audit", "0011_roster_stale_action"),
    ]

    operations = [migrations.RunPython(backfill_resolved_at, migrations.RunPython.noop)]
