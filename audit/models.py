"""The audit trail: an append-only record of what staff did, to whom, from where."""

from django.conf import settings
from django.db import models


class AppendOnlyQuerySet(models.QuerySet):
    """Refuse bulk changes too, not only an event's own save and delete."""

    def update(self, **kwargs):
        raise PermissionError("Audit events are append-only.")

    def delete(self):
        raise PermissionError("Audit events are append-only.")


class AuditEvent(models.Model):
    """One staff action. Never updated or deleted; never holds a password or the API key."""

    class Action(models.TextChoices):
        LEARNER_REGISTERED = "learner_registered", "Registered a learner"
        RESULTS_VIEWED = "results_viewed", "Viewed results"
        PASSWORD_RESET = "password_reset", "Reset a learner's password"
        LEARNER_EXPORTED = "learner_exported", "Exported a learner's data"
        LEARNER_ERASED = "learner_erased", "Erased a learner's personal data"
        LEARNERS_EXPORTED = "learners_exported", "Exported learners"
        SUBMISSION_RETRIED = "submission_retried", "Retried a submission"
        LEARNERS_IMPORTED = "learners_imported", "Started a bulk registration"
        CREDENTIALS_DOWNLOADED = "credentials_downloaded", "Downloaded generated passwords"
        RESULTS_EXPORTED = "results_exported", "Exported results"
        FOLLOW_UP_CHANGED = "follow_up_changed", "Changed a follow-up"

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
        "learner reference", max_length=40, blank=True, help_text="The learner's local id."
    )
    detail = models.JSONField(default=dict, blank=True)
    ip_address = models.GenericIPAddressField("client IP", null=True, blank=True)

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor_username}: {self.get_action_display()}"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise PermissionError("Audit events are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise PermissionError("Audit events are append-only.")
