"""Staff's decision to keep a learner's records past the retention period, or not to."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext, gettext_lazy


class RecordsHold(models.Model):
    """What staff decided about keeping one learner's records (privacy.selectors.hold_of).

    Placed: everything is kept until a member of staff lifts that hold (which empties the three
    `placed` fields). Lifted (`lifted_at`): the automatic hold of the safeguarding concerns
    raised until then (alerts, follow-ups) no longer keeps the records; a concern raised after
    the lift holds them again. Only a safeguarding lead lifts either, giving a reason (the
    latest in `lift_reason`). No row: only the automatic hold applies. The audit trail keeps
    the history.
    """

    learner = models.OneToOneField(
        "learners.Learner", on_delete=models.CASCADE, related_name="records_hold"
    )
    # A hold staff placed, in force while set.
    placed_at = models.DateTimeField(null=True, blank=True)
    placed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    # Free text about a child: never copied to the audit trail, gone with an erasure.
    reason = models.TextField(gettext_lazy("reason"), max_length=500, blank=True)
    # The latest lift of the automatic hold: it covers the concerns raised until then.
    lifted_at = models.DateTimeField(null=True, blank=True)
    lifted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    # Why a safeguarding lead last lifted a hold: free text about a child too, kept like
    # `reason` (never in the trail, gone with an erasure).
    lift_reason = models.TextField(gettext_lazy("reason for lifting"), max_length=500, blank=True)

    def __str__(self) -> str:
        return gettext("Records hold of learner #%(pk)s") % {"pk": self.learner_id}

    @property
    def in_force(self) -> bool:
        """Return whether a hold staff placed keeps the records now."""
        return self.placed_at is not None
