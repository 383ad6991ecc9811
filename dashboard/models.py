"""The dashboard's read model: completed results as the dashboard counts them.

Counting "each learner's latest result within a date range" straight from the records sorts
every result of the cohort on each page view (seconds at 300,000 attempts). Here each result
row carries `superseded_at`, when the same learner's next result came (empty for their
latest), so "latest within [start, end)" is a plain range condition an index can answer:
`start <= completed_at < end` and (`superseded_at` empty or `superseded_at >= end`).
The rows are derived data: `dashboard.cohort` rebuilds any learner's rows from the records.
"""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext

from assessments.models import AssessmentResult
from learners.models import Learner

LATEST = Q(superseded_at__isnull=True)


class CohortResult(models.Model):
    """One stored result, with the learner's level and the time a newer result replaced it."""

    result = models.OneToOneField(
        AssessmentResult, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="+")
    # Copied: a learner's level changes only when staff correct it, which refreshes these rows.
    level = models.CharField(max_length=32, blank=True)
    # Copied too, so the trust's figures count each school's rows from an index alone (joining
    # the learners costs ten times as much at 100,000). Indexed below, with the latest rows.
    school = models.ForeignKey(
        "schools.School", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    completed_at = models.DateTimeField()
    superseded_at = models.DateTimeField(null=True, blank=True)
    risk_level = models.CharField(max_length=200)

    class Meta:
        indexes = [
            models.Index(
                fields=["level", "risk_level"], condition=LATEST, name="cohort_latest_risk"
            ),
            models.Index(
                fields=["school", "risk_level"], condition=LATEST, name="cohort_latest_school"
            ),
            models.Index(fields=["completed_at", "level"], name="cohort_result_completed"),
            # The latest results of some learners only (a school's, a teacher's groups'),
            # found under each learner, the result's id included for the focus areas' join.
            models.Index(
                fields=["learner", "level", "risk_level"],
                include=["result"],
                condition=LATEST,
                name="cohort_latest_learner",
            ),
        ]

    def __str__(self) -> str:
        return gettext("Result %(result)s: %(risk_level)s") % {
            "result": self.result_id,
            "risk_level": self.risk_level,
        }


class CohortNeedsHelp(models.Model):
    """One focus area needing help in a CohortResult, with that row's filter columns copied."""

    cohort_result = models.ForeignKey(
        CohortResult, on_delete=models.CASCADE, related_name="areas_needing_help"
    )
    name = models.CharField(max_length=200)
    level = models.CharField(max_length=32, blank=True)
    school = models.ForeignKey(
        "schools.School", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    completed_at = models.DateTimeField()
    superseded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["level", "name"], condition=LATEST, name="cohort_latest_area"),
            models.Index(
                fields=["school", "name"], condition=LATEST, name="cohort_latest_school_area"
            ),
            models.Index(fields=["completed_at", "level"], name="cohort_area_completed"),
        ]

    def __str__(self) -> str:
        return self.name
