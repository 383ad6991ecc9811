"""The audit trail: an append-only record of what staff did, to whom, from where."""

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext_lazy as _


class AppendOnlyQuerySet(models.QuerySet):
    """Refuse bulk changes too, not only an event's own save and delete."""

    def update(self, **kwargs):
        raise PermissionError("Audit events are append-only.")

    def delete(self):
        raise PermissionError("Audit events are append-only.")


class AuditEvent(models.Model):
    """One staff action. Never updated or deleted; never holds a password or the API key."""

    class Action(models.TextChoices):
        LEARNER_REGISTERED = "learner_registered", _("Registered a learner")
        RESULTS_VIEWED = "results_viewed", _("Viewed results")
        PASSWORD_RESET = "password_reset", _("Reset a learner's password")
        LEARNER_EXPORTED = "learner_exported", _("Exported a learner's data")
        LEARNER_ERASED = "learner_erased", _("Erased a learner's personal data")
        LEARNERS_EXPORTED = "learners_exported", _("Exported learners")
        SUBMISSION_RETRIED = "submission_retried", _("Retried a submission")
        LEARNERS_IMPORTED = "learners_imported", _("Started a bulk registration")
        CREDENTIALS_DOWNLOADED = "credentials_downloaded", _("Downloaded generated passwords")
        RESULTS_EXPORTED = "results_exported", _("Exported results")
        FOLLOW_UP_CHANGED = "follow_up_changed", _("Changed a follow-up")
        GROUP_CREATED = "group_created", _("Created a group")
        GROUP_CHANGED = "group_changed", _("Changed a group")
        GROUP_JOINED = "group_joined", _("Added a learner to a group")
        GROUP_LEFT = "group_left", _("Removed a learner from a group")
        STAFF_ADDED = "staff_added", _("Added a staff account")
        STAFF_CHANGED = "staff_changed", _("Changed a staff account")
        SETTINGS_CHANGED = "settings_changed", _("Changed the partner's settings")
        SIGN_IN_LOCK_LIFTED = "sign_in_lock_lifted", _("Lifted a sign-in lock")
        CARDS_PRINTED = "cards_printed", _("Printed sign-in cards")
        CARD_REISSUED = "card_reissued", _("Voided and reissued a sign-in card")
        SIGN_IN_OPENED = "sign_in_opened", _("Opened card sign-in for a group")
        SIGN_IN_CLOSED = "sign_in_closed", _("Closed card sign-in for a group")
        CARD_SESSION_ENDED = "card_session_ended", _("Ended a pupil's card session")
        ALERT_RAISED = "alert_raised", _("Raised a safeguarding alert")
        ALERT_ACKNOWLEDGED = "alert_acknowledged", _("Acknowledged a safeguarding alert")
        ALERT_ESCALATED = "alert_escalated", _("Escalated a safeguarding alert")
        HELP_ASKED = "help_asked", _("A learner asked to talk to someone")
        HOLD_PLACED = "hold_placed", _("Placed a safeguarding hold")
        HOLD_LIFTED = "hold_lifted", _("Lifted a safeguarding hold")
        RECORDS_EXPIRED = "records_expired", _("Erased records past their retention period")
        LEARNER_CHANGED = "learner_changed", _("Changed a learner's details")
        SSO_LINKED = "sso_linked", _("Linked a school account at sign-in")
        SSO_REFUSED = "sso_refused", _("Refused a school account's sign-in")
        ROSTER_SYNCED = "roster_synced", _("Applied a roster sync")
        ROSTER_HELD = "roster_held", _("Held a roster sync for an admin")
        ROSTER_APPROVED = "roster_approved", _("Approved a held roster sync")
        ROSTER_DISCARDED = "roster_discarded", _("Discarded a held roster sync")
        ROSTER_STALE = "roster_stale", _("Failed an approved roster sync: another applied first")
        ROSTER_SLIPS_PRINTED = "roster_slips_printed", _("Printed password slips of a roster sync")
        ROSTER_GRADES_CHANGED = "roster_grades_changed", _("Changed how grades map to levels")
        LEARNER_LEFT = "learner_left", _("A learner left the school (roster)")
        LEARNER_RETURNED = "learner_returned", _("A learner came back to the school (roster)")
        GROUP_ARCHIVED = "group_archived", _("Archived last year's group")
        CHRONOLOGY_VIEWED = "chronology_viewed", _("Viewed a child's safeguarding chronology")
        CHRONOLOGY_PRINTED = "chronology_printed", _("Printed a child's safeguarding record")
        CHRONOLOGY_AMENDED = "chronology_amended", _("Amended a safeguarding chronology entry")

    # The school this belongs to (none for what concerns no one school): pages scope by it.
    school = models.ForeignKey(
        "schools.School", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Kept as text too, so the record still says who it was if the account goes.
    actor_username = models.CharField(max_length=150)
    action = models.CharField(max_length=40, choices=Action.choices, db_index=True)
    learner = models.ForeignKey(
        "learners.Learner", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    learner_ref = models.CharField(
        _("learner reference"), max_length=40, blank=True, help_text=_("The learner's local id.")
    )
    detail = models.JSONField(default=dict, blank=True)
    ip_address = models.GenericIPAddressField(_("client IP"), null=True, blank=True)

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        # Shown in the admin: the time in the locale's short format.
        at = date_format(timezone.localtime(self.at), "SHORT_DATETIME_FORMAT") if self.at else "-"
        return f"{at} {self.actor_username}: {self.get_action_display()}"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise PermissionError("Audit events are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise PermissionError("Audit events are append-only.")
