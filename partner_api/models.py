"""The upstream's record on our side: failed calls, and its health shared by every process."""

from django.db import models


class UpstreamFailure(models.Model):
    """One failed call to the assessment service, kept for the operations page."""

    endpoint = models.CharField(max_length=40)
    method = models.CharField(max_length=8)
    outcome = models.CharField(max_length=200)
    status = models.IntegerField(null=True, blank=True)
    attempt = models.PositiveIntegerField(default=1)
    request_id = models.CharField(max_length=100, blank=True)
    latency_ms = models.PositiveIntegerField(default=0)
    at = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "portal_upstreamfailure"  # the table it had before it moved here
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["endpoint", "at"])]

    def __str__(self) -> str:
        return f"{self.endpoint} {self.outcome} at {self.at:%Y-%m-%d %H:%M:%S}"


class UpstreamHealth(models.Model):
    """Until when the assessment service is marked unavailable, shared by every process.

    Each process has its own circuit breaker; this row lets the web pages show the banner
    when the worker (or another web process) has found the service down.
    """

    base_url = models.CharField(max_length=500, unique=True)
    unavailable_until = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "portal_upstreamhealth"  # the table it had before it moved here

    def __str__(self) -> str:
        return f"{self.base_url}: unavailable until {self.unavailable_until or '-'}"
