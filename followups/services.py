"""Business rules of follow-ups: opening items from results, and staff changing them."""

import logging
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.formats import date_format

from accounts.access import sees_results, staff_name
from assessments.concern import concern_of_result
from assessments.models import (
    AssessmentAttempt,
    AssessmentResult,
    needs_help_flagged,
    risk_rank,
)
from audit.models import AuditEvent
from audit.services import audit_record
from followups.models import FollowUp, FollowUpArea, FollowUpHistory, FollowUpNote
from learners.models import Learner

logger = logging.getLogger(__name__)


def followup_due_days() -> int:
    """Return how many days after opening an item is due (the FOLLOW_UP_DUE_DAYS setting)."""
    return settings.FOLLOW_UP_DUE_DAYS


def followup_due_date(*, opened_at: datetime) -> date:
    """Return the default due date of an item opened at `opened_at`."""
    return timezone.localdate(opened_at) + timedelta(days=followup_due_days())


def flagged_area_names(result: AssessmentResult) -> list[str]:
    """Return the names of the result's focus areas that need help, once each, in order."""
    names = (area.name for area in result.focus_areas.all() if needs_help_flagged(area.needs_help))
    return list(dict.fromkeys(names))


def followup_open_for_result(
    *, result: AssessmentResult, priority: bool | None = None
) -> FollowUp | None:
    """Open the item of a result that flags a focus area or calls for an alert; return it.

    `priority` (worked out from the partner's lists when None) marks an item a safeguarding
    alert went out for; it sorts first. None is returned when no item is due.
    """
    names = flagged_area_names(result)
    attempt = result.attempt
    if attempt.learner.status == Learner.Status.ERASED:
        return None
    if priority is None:
        priority = concern_of_result(result).raises_alert
    if not names and not priority:
        return None
    with transaction.atomic():
        # The attempt is unique: a second call (a retry, the backfill) finds the first item.
        follow_up, created = FollowUp.objects.get_or_create(
            attempt=attempt,
            defaults={
                "learner_id": attempt.learner_id,
                "school_id": attempt.learner.school_id,
                "risk_level": result.risk_level,
                "risk_rank": risk_rank(result.risk_level),
                "due_date": followup_due_date(opened_at=timezone.now()),
                "priority": priority,
            },
        )
        if created:
            FollowUpArea.objects.bulk_create(
                FollowUpArea(follow_up=follow_up, name=name) for name in names
            )
            logger.info("Opened follow-up %s for attempt %s", follow_up.pk, attempt.pk)
        elif priority and not follow_up.priority:
            follow_up.priority = True
            follow_up.save(update_fields=["priority", "updated_at"])
    return follow_up


def followup_open_for_learner_request(*, learner: Learner) -> FollowUp:
    """Open a priority item for a learner who asked to talk to someone (no result behind it)."""
    follow_up = FollowUp.objects.create(
        learner=learner,
        school_id=learner.school_id,
        source=FollowUp.Source.ASKED,
        priority=True,
        risk_level="",
        due_date=timezone.localdate(),
    )
    logger.info("Opened follow-up %s: a learner asked to talk to someone", follow_up.pk)
    return follow_up


def followups_open_missing(*, batch_size: int = 500) -> int:
    """Open items for completed results stored before follow-ups existed; return how many."""
    opened = 0
    results = (
        AssessmentResult.objects.filter(
            attempt__state=AssessmentAttempt.State.COMPLETED,
            attempt__follow_up__isnull=True,
            attempt__learner__status=Learner.Status.ACTIVE,
        )
        .select_related("attempt__learner")
        .prefetch_related("focus_areas")
        .order_by("pk")
    )
    for result in results.iterator(chunk_size=batch_size):
        if followup_open_for_result(result=result) is not None:
            opened += 1
    return opened


@dataclass(frozen=True)
class FollowUpChange:
    """What one update changed: field names (for the audit), and whether a note was added."""

    fields: list[str]
    note_added: bool

    @property
    def changed_anything(self) -> bool:
        return bool(self.fields) or self.note_added


def _in_words(follow_up: FollowUp) -> dict[str, str]:
    """Return an item's status, assignee and due date as staff read them (for its history)."""
    # Setting assignee_id forgets the cached assignee: this reads the one now chosen.
    assignee = follow_up.assignee
    return {
        "status": str(follow_up.get_status_display()),
        "assignee": staff_name(assignee) if assignee is not None else "",
        "due_date": date_format(follow_up.due_date, "DATE_FORMAT"),
    }


def followup_update(
    *,
    follow_up: FollowUp,
    changed_by: AbstractBaseUser,
    address: str | None = None,
    status: str,
    assignee: AbstractBaseUser | None,
    due_date: date,
    note: str = "",
) -> FollowUpChange:
    """Apply a staff member's changes and note to an item, audited; return what changed."""
    if status not in FollowUp.Status.values:
        raise ValueError(f"Unknown follow-up status {status!r}")
    if assignee is not None and not sees_results(assignee):
        raise ValueError("Only partner staff who read results can be assigned a follow-up")
    with transaction.atomic():
        # Two staff saving at once: each sees the other's committed values, not a stale copy.
        locked = FollowUp.objects.select_for_update().get(pk=follow_up.pk)
        wanted = {"status": status, "assignee_id": assignee.pk if assignee else None,
                  "due_date": due_date}  # fmt: skip
        fields = [name for name, value in wanted.items() if getattr(locked, name) != value]
        before = _in_words(locked)
        for name in fields:
            setattr(locked, name, wanted[name])
        saved = list(fields)
        if "status" in fields:
            # A routine item keeps records for the retention period from its resolving.
            locked.resolved_at = timezone.now() if status == FollowUp.Status.RESOLVED else None
            saved.append("resolved_at")
        if fields:
            locked.save(update_fields=[*saved, "updated_at"])
            after = _in_words(locked)
            FollowUpHistory.objects.create(
                follow_up=locked,
                changed_by=changed_by,
                changed_by_name=staff_name(changed_by),
                changes=[
                    {"field": name, "from": before[name], "to": after[name]}
                    for name in before
                    if before[name] != after[name]
                ],
            )
        note = note.strip()
        if note:
            FollowUpNote.objects.create(
                follow_up=locked,
                author=changed_by,
                author_username=changed_by.get_username(),
                text=note,
            )
            if not fields:
                locked.save(update_fields=["updated_at"])
        change = FollowUpChange(
            fields=[name.removesuffix("_id") for name in fields], note_added=bool(note)
        )
        if change.changed_anything:
            # The item's learner is the caller's (it never changes); after the update, the
            # assignee is the one asked for: no need to load either again.
            audit_record(
                actor=changed_by,
                address=address,
                action=AuditEvent.Action.FOLLOW_UP_CHANGED,
                learner=follow_up.learner,
                follow_up=locked.pk,
                changed=change.fields,
                status=locked.status,
                assignee=assignee.get_username() if assignee else None,
                due_date=locked.due_date.isoformat(),
                # Notes stay out of the trail: they may say sensitive things about a young
                # person, and the trail is append-only and outlives an erasure.
                note_added=change.note_added,
            )
    follow_up.refresh_from_db()
    return change


def followups_forget_learner(*, learner: Learner) -> int:
    """Delete an erased learner's follow-ups, notes included (free text about a person)."""
    deleted, _ = FollowUp.objects.filter(learner=learner).delete()
    return deleted


def followups_export(*, learner: Learner) -> list[dict]:
    """Return a learner's follow-ups with their notes, for the learner's data export."""
    items = (
        learner.follow_ups.select_related("attempt", "assignee")
        .defer("attempt__content")
        .prefetch_related("areas", "notes")
    )
    return [
        {
            "assessment_id": item.attempt.assessment_id if item.attempt else None,
            "source": item.source,
            "priority": item.priority,
            "focus_areas": [area.name for area in item.areas.all()],
            "risk_level": item.risk_level,
            "status": item.status,
            "assigned_to": item.assignee.get_username() if item.assignee else None,
            "due_date": item.due_date.isoformat(),
            "opened_at": item.created_at.isoformat(),
            "updated_at": item.updated_at.isoformat(),
            "notes": [
                {"at": note.created_at.isoformat(), "by": note.author_username, "text": note.text}
                for note in reversed(item.notes.all())
            ],
        }
        for item in items.order_by("created_at", "id")
    ]
