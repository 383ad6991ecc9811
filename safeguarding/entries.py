"""Writing a child's safeguarding record: actions, notes, amendments within a day, corrections."""

from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from accounts.access import staff_name
from audit.models import AuditEvent
from audit.services import audit_record
from learners.models import Learner
from safeguarding.models import Alert, ChronologyEntry, ChronologyRevision

# An author may put right their own words this long after writing them; after that the
# record stands as written, and a correction is a new entry (as CPOMS and MyConcern keep it).
AMEND_WINDOW = timedelta(hours=24)


class EntryLocked(Exception):
    """The entry may no longer be amended (or not by this person): add a correction instead."""


class NoChronology(ValueError):
    """The concern has no learner (erased): there is no chronology to write in."""


def entry_add_action(
    *, alert: Alert, by: AbstractBaseUser, action: str = "", note: str = "", category: str = ""
) -> ChronologyEntry:
    """Add an action taken on a concern, with its note, to the child's chronology."""
    with transaction.atomic():
        # Read under lock: an erasure may have unlinked the learner since the page was read.
        current = Alert.objects.select_for_update().filter(pk=alert.pk)
        learner_id = current.values_list("learner_id", flat=True).first()
        if learner_id is None:
            raise NoChronology("A concern without a learner has no chronology")
        return ChronologyEntry.objects.create(
            school_id=alert.school_id,
            learner_id=learner_id,
            alert=alert,
            kind=ChronologyEntry.Kind.ACTION if action else ChronologyEntry.Kind.NOTE,
            action=action,
            category=category or alert.category,
            text=note.strip(),
            author=by,
            author_name=staff_name(by),
        )


def entry_add_note(*, learner: Learner, by: AbstractBaseUser, text: str) -> ChronologyEntry:
    """Add a lead's own note to the child's chronology."""
    return ChronologyEntry.objects.create(
        school_id=learner.school_id,
        learner=learner,
        kind=ChronologyEntry.Kind.NOTE,
        text=text.strip(),
        author=by,
        author_name=staff_name(by),
    )


def entry_correct(*, entry: ChronologyEntry, by: AbstractBaseUser, text: str) -> ChronologyEntry:
    """Add a correction of an earlier entry: a new entry naming it; the earlier one stands."""
    return ChronologyEntry.objects.create(
        school_id=entry.school_id,
        learner_id=entry.learner_id,
        alert_id=entry.alert_id,
        kind=ChronologyEntry.Kind.CORRECTION,
        corrects=entry,
        text=text.strip(),
        author=by,
        author_name=staff_name(by),
    )


def entry_amendable(
    entry: ChronologyEntry, user: AbstractBaseUser, now: datetime | None = None
) -> bool:
    """Return whether the user may still amend the entry: its author, within a day of writing."""
    now = now or timezone.now()
    return entry.author_id == user.pk and now < entry.created_at + AMEND_WINDOW


def entry_amend(
    *, entry: ChronologyEntry, by: AbstractBaseUser, text: str, address: str | None = None
) -> ChronologyEntry:
    """Amend the author's own entry within a day, keeping its earlier words (audited).

    EntryLocked after that day, or for anyone else.
    """
    with transaction.atomic():
        locked = (
            ChronologyEntry.objects.select_for_update(of=("self",))
            .select_related("learner")
            .get(pk=entry.pk)
        )
        now = timezone.now()
        if not entry_amendable(locked, by, now):
            raise EntryLocked
        ChronologyRevision.objects.create(entry=locked, text=locked.text, replaced_at=now)
        locked.text = text.strip()
        locked.edited_at = now
        locked.save(update_fields=["text", "edited_at"])
        # Which entry, never its words: the audit trail is read more widely than the record.
        audit_record(
            actor=by,
            address=address,
            action=AuditEvent.Action.CHRONOLOGY_AMENDED,
            learner=locked.learner,
            entry=locked.pk,
        )
    return locked


def chronology_opened(
    *, learner: Learner, by: AbstractBaseUser, address: str | None, printed: bool, entries: int
) -> None:
    """Audit that a lead read a child's chronology, or opened it to print (it may leave)."""
    audit_record(
        actor=by,
        address=address,
        action=AuditEvent.Action.CHRONOLOGY_PRINTED
        if printed
        else AuditEvent.Action.CHRONOLOGY_VIEWED,
        learner=learner,
        entries=entries,
    )
