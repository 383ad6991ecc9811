"""A child's safeguarding chronology: every concern, action, note and concern follow-up, merged."""

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext

from accounts.access import staff_name
from followups.models import FollowUp, FollowUpHistory, FollowUpNote
from learners.models import Learner
from safeguarding.entries import entry_amendable
from safeguarding.models import Alert, ChronologyEntry


@dataclass
class ChronologyLine:
    """One dated line of the chronology, whatever it came from, with who and when."""

    at: datetime
    who: str
    what: str  # the heading: "Alert raised", "Action taken", "Follow-up changed"...
    kind: str  # raised | acknowledged | action | note | correction | follow_up | follow_up_note
    details: list[str] = field(default_factory=list)
    text: str = ""
    alert: Alert | None = None
    entry: ChronologyEntry | None = None
    amendable: bool = False
    # Ties at the same instant: an acknowledgement sorts below the action it brought.
    order: int = 0

    @property
    def anchor(self) -> str:
        return f"entry-{self.entry.pk}" if self.entry is not None else ""


def _who(user: AbstractBaseUser | None, kept_name: str) -> str:
    return staff_name(user) if user is not None else kept_name


def _alert_lines(alert: Alert) -> list[ChronologyLine]:
    """Return the raising of a concern and, once a lead took it on, its acknowledgement."""
    # A request says what it is in its heading; a result says why it alerted.
    details = [alert.get_reason_display()] if alert.kind == Alert.Kind.RESULT else []
    for value in alert.values:
        risk = value.get("field") == "risk_level"
        label = gettext("Risk level") if risk else gettext("Needs help")
        details.append(f"{label}: “{value.get('value', '')}”")
    if alert.urgent:
        details.append(gettext("The pupil said they do not feel safe right now (urgent)."))
    if alert.about:
        details.append(gettext("About: %(about)s") % {"about": alert.get_about_display()})
    if alert.wanted_contact:
        details.append(gettext("Would like to talk to: %(name)s") % {"name": alert.wanted_contact})
    # Read after "by": "by the pupil", "by the portal, from a result".
    if alert.kind == Alert.Kind.ASKED:
        who = gettext("the pupil")
    else:
        who = gettext("the portal, from a result")
    lines = [
        ChronologyLine(
            at=alert.raised_at,
            who=who,
            what=alert.get_kind_display(),
            kind="raised",
            details=details,
            alert=alert,
        )
    ]
    if alert.acknowledged_at is not None:
        category = alert.get_category_display() if alert.category else ""
        lines.append(
            ChronologyLine(
                at=alert.acknowledged_at,
                who=_who(alert.acknowledged_by, alert.acknowledged_by_username),
                what=gettext("Concern taken on"),
                kind="acknowledged",
                details=[gettext("Category: %(category)s") % {"category": category}]
                if category
                else [],
                alert=alert,
                order=-1,
            )
        )
    return lines


def _entry_line(entry: ChronologyEntry, viewer: AbstractBaseUser | None, now) -> ChronologyLine:
    details = []
    if entry.action:
        details.append(entry.action)
    if entry.category and entry.kind != ChronologyEntry.Kind.CORRECTION:
        details.append(
            gettext("Category: %(category)s") % {"category": entry.get_category_display()}
        )
    return ChronologyLine(
        at=entry.created_at,
        who=_who(entry.author, entry.author_name),
        what=entry.get_kind_display(),
        kind=entry.kind,
        details=details,
        text=entry.text,
        alert=entry.alert,
        entry=entry,
        amendable=viewer is not None and entry_amendable(entry, viewer, now),
    )


def _change_words(change: dict) -> str:
    names = {
        "status": gettext("Status"),
        "assignee": gettext("Assigned to"),
        "due_date": gettext("Due date"),
    }
    return gettext("%(field)s: %(from)s → %(to)s") % {
        "field": names.get(change.get("field"), change.get("field", "")),
        "from": change.get("from") or gettext("none"),
        "to": change.get("to") or gettext("none"),
    }


def _follow_up_name(item: FollowUp) -> str:
    """Name the follow-up item a line is about, and where it came from."""
    if item.source == FollowUp.Source.ASKED:
        origin = gettext("the pupil asked to talk")
    else:
        origin = gettext("from a result")
    return gettext("Follow-up #%(pk)s (%(origin)s)") % {"pk": item.pk, "origin": origin}


def chronology_entries(learner: Learner) -> QuerySet:
    """Return the learner's own chronology entries, with what a line shows of each."""
    return ChronologyEntry.objects.filter(learner=learner).select_related(
        "author", "alert", "corrects"
    )


def chronology_of(
    learner: Learner, *, viewer: AbstractBaseUser | None = None
) -> list[ChronologyLine]:
    """Return the learner's whole safeguarding chronology, newest first."""
    now = timezone.now()
    lines: list[ChronologyLine] = []
    alerts = (
        Alert.objects.filter(learner=learner)
        .exclude(kind=Alert.Kind.TEST)
        .select_related("acknowledged_by")
    )
    for alert in alerts:
        lines.extend(_alert_lines(alert))
    entries = list(chronology_entries(learner).prefetch_related("corrections", "revisions"))
    lines.extend(_entry_line(entry, viewer, now) for entry in entries)
    # Only the follow-ups of concerns: a routine one (study skills) is no child-protection record.
    concerns = Q(follow_up__priority=True) | Q(
        follow_up__in=alerts.filter(follow_up__isnull=False).values("follow_up")
    )
    mine = Q(follow_up__learner=learner) & concerns
    history = FollowUpHistory.objects.filter(mine).select_related("changed_by", "follow_up")
    lines.extend(
        ChronologyLine(
            at=change.created_at,
            who=_who(change.changed_by, change.changed_by_name),
            what=gettext("Follow-up changed"),
            kind="follow_up",
            details=[_follow_up_name(change.follow_up)]
            + [_change_words(item) for item in change.changes],
        )
        for change in history
    )
    notes = FollowUpNote.objects.filter(mine).select_related("author", "follow_up")
    lines.extend(
        ChronologyLine(
            at=note.created_at,
            who=_who(note.author, note.author_username),
            what=gettext("Follow-up note"),
            kind="follow_up_note",
            details=[_follow_up_name(note.follow_up)],
            text=note.text,
        )
        for note in notes
    )
    lines.sort(key=lambda line: (line.at, line.order), reverse=True)
    return lines
