"""A learner asks to talk to someone: the alert it raises, and what a second press adds."""

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from audit.models import AuditEvent
from audit.services import audit_record
from followups.services import followup_open_for_learner_request
from learners.models import Learner
from safeguarding.models import UNACKNOWLEDGED, Alert
from safeguarding.services import alert_create, alerts_escalate_due

# The longest name the alert keeps of whom the pupil asked for (the model's column).
CONTACT_LENGTH = Alert._meta.get_field("wanted_contact").max_length


@transaction.atomic
def alert_raise_for_request(
    *, learner: Learner, about: str = "", contact: str = "", unsafe: bool = False
) -> tuple[Alert, bool]:
    """Raise an alert for a learner who asked to talk to someone; return it and if it is new.

    A second press while the first is not yet acknowledged raises nothing new: the adults
    already know, and one child must not fill the queue. What it says that the first did not
    (what it is about, whom they want, that they do not feel safe) is added to the first.
    """
    Learner.objects.select_for_update().filter(pk=learner.pk).first()
    now = timezone.now()
    contact = contact[:CONTACT_LENGTH]
    waiting = (
        Alert.objects.select_for_update()
        .filter(UNACKNOWLEDGED, learner=learner, kind=Alert.Kind.ASKED)
        .order_by("-raised_at")
        .first()
    )
    if waiting is not None:
        _request_add(waiting, about=about, contact=contact, unsafe=unsafe, now=now)
        return waiting, False
    follow_up = followup_open_for_learner_request(learner=learner)
    alert = alert_create(
        now=now,
        kind=Alert.Kind.ASKED,
        reason=Alert.Reason.ASKED,
        learner=learner,
        follow_up=follow_up,
        urgent=unsafe,
        about=about,
        wanted_contact=contact,
    )
    # Not the pupil as actor, nor their address, nor what they chose: the trail outlives an
    # erasure, and the learner link is what erasure anonymises.
    audit_record(
        actor=None,
        address=None,
        action=AuditEvent.Action.HELP_ASKED,
        learner=learner,
        alert=alert.pk,
        **({"urgent": True} if unsafe else {}),
    )
    if unsafe:
        # A pupil who does not feel safe does not wait for the deadline: the escalation
        # (its audit line and email) goes now, in this transaction.
        alerts_escalate_due(now=now, alert_ids=[alert.pk])
    return alert, True


def _request_add(alert: Alert, *, about: str, contact: str, unsafe: bool, now: datetime) -> None:
    """Add to a waiting request what a second press says that it lacks; urgent escalates now."""
    changed = []
    if about and not alert.about:
        alert.about = about
        changed.append("about")
    if contact and not alert.wanted_contact:
        alert.wanted_contact = contact
        changed.append("wanted_contact")
    made_urgent = unsafe and not alert.urgent
    if made_urgent:
        alert.urgent = True
        alert.escalate_at = min(alert.escalate_at, now)
        changed += ["urgent", "escalate_at"]
    if not changed:
        return
    alert.save(update_fields=changed)
    if made_urgent:
        audit_record(
            actor=None,
            address=None,
            action=AuditEvent.Action.HELP_ASKED,
            learner=alert.learner,
            alert=alert.pk,
            urgent=True,
            again=True,
        )
        # Already escalated (past its deadline): the leads above have it; nothing to send.
        alerts_escalate_due(now=now, alert_ids=[alert.pk])
