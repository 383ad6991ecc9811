"""The retention sweep: erase the records of learners gone longer than the partner keeps them.

Each learner is one transaction that checks again, under the learner's lock, that the records
are still past their time and nothing holds them, then erases them as staff erasure does
(privacy.services.learner_erase: the anonymous counts stay). A run stopped half-way leaves
every learner either erased or untouched, and the next run goes on from there.
"""

import logging
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from audit.models import AuditEvent
from privacy.selectors import learners_past_retention
from privacy.services import ErasureDeferred, ErasureRefused, learner_erase
from schools.models import PartnerSettings

logger = logging.getLogger(__name__)


def records_sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Erase every learner past the retention period and not held; return what it did."""
    now = now or timezone.now()
    counts = {"expired": 0, "held": 0, "deferred": 0}
    candidates = learners_past_retention(now=now).order_by("pk").values_list("pk", flat=True)
    for learner_id in list(candidates):
        outcome = learner_records_expire(learner_id=learner_id, now=now)
        if outcome in counts:
            counts[outcome] += 1
    return counts


def learner_records_expire(*, learner_id: int, now: datetime) -> str:
    """Erase one learner's records if they are past their time and not held (audited).

    Return "expired", "held" (a hold, or an alert no lead has acknowledged yet), "deferred"
    (a submission is being sent: the next run erases) or "kept" (active again, or already
    erased).
    """
    try:
        with transaction.atomic():
            learner = (
                learners_past_retention(now=now)
                .select_for_update(of=("self",))
                .filter(pk=learner_id)
                .first()
            )
            if learner is None:
                return "kept"
            years = PartnerSettings.of(learner.school_id).retention_years
            # Refused (ErasureRefused) while a hold or an unacknowledged alert keeps them.
            learner_erase(
                learner=learner,
                erased_by=None,
                action=AuditEvent.Action.RECORDS_EXPIRED,
                today=timezone.localdate(now),
                retention_years=years,
                last_activity=learner.last_activity.isoformat(),
            )
    except ErasureRefused:
        return "held"
    except ErasureDeferred:
        return "deferred"
    logger.info("Records of learner %s expired (%s years after last activity)", learner_id, years)
    return "expired"
