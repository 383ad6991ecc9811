"""Assessment attempts, the answers given so far, and the results received."""

from datetime import UTC, datetime

from django.db import models
from django.utils.functional import cached_property
from django.utils.translation import gettext, gettext_lazy

from assessments.content import has_questions, questions_from_json, questions_to_json
from partner_api import Question

# The attempts the dashboard counts as not finished: its two indexes hold only these.
NOT_FINISHED = models.Q(
    state__in=["available", "in_progress", "submitting", "submit_pending", "submitted"]
)


class AssessmentAttempt(models.Model):
    """One upstream assessment offered to a learner, from offer to results."""

    class State(models.TextChoices):
        AVAILABLE = "available", gettext_lazy("Available")
        IN_PROGRESS = "in_progress", gettext_lazy("In progress")
        SUBMITTING = "submitting", gettext_lazy("Submitting")
        SUBMIT_PENDING = "submit_pending", gettext_lazy("Waiting to be sent")
        SUBMITTED = "submitted", gettext_lazy("Submitted")
        COMPLETED = "completed", gettext_lazy("Completed")
        REJECTED = "rejected", gettext_lazy("Refused by the assessment service")

    # The learner may still change answers.
    OPEN_STATES = (State.AVAILABLE, State.IN_PROGRESS)
    # The learner must finish these (or their answers are not yet safely delivered) before a
    # new assessment is asked for: the upstream would offer the same one again anyway.
    UNFINISHED_STATES = (State.IN_PROGRESS, State.SUBMITTING, State.SUBMIT_PENDING, State.REJECTED)
    # Sent and accepted: the learner's past assessments.
    FINISHED_STATES = (State.COMPLETED, State.SUBMITTED)
    # On their way without the learner doing anything: results may arrive at any moment.
    WAITING_STATES = (State.SUBMITTING, State.SUBMIT_PENDING, State.SUBMITTED)

    # By name: the learners app sits above this one (its pages show attempts) and imports it.
    learner = models.ForeignKey(
        "learners.Learner", on_delete=models.CASCADE, related_name="attempts"
    )
    assessment_id = models.BigIntegerField()
    assessment_version = models.IntegerField(null=True, blank=True)
    target_group = models.CharField(max_length=100, blank=True)
    offer_status = models.CharField(
        max_length=100,
        blank=True,
        help_text=gettext_lazy("The upstream's status text when it was offered."),
    )
    title = models.TextField(blank=True)
    level = models.CharField(max_length=100, blank=True)
    version = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    preassess = models.BooleanField(default=False)
    # Whether its pages show one question at a time, fixed when its content is stored: a school
    # changing the setting mid-attempt must not renumber the pages a learner is on. Null for
    # attempts stored before this was kept (decided from the level and setting, as then).
    one_per_screen = models.BooleanField(null=True, blank=True)
    # The questions and answers exactly as validated at fetch time, so that every page of
    # the taking flow is served locally (one upstream fetch per attempt).
    content = models.JSONField(default=dict, blank=True)
    session = models.TextField(blank=True)
    state = models.CharField(max_length=20, choices=State.choices, default=State.AVAILABLE)
    offered_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    last_saved_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    # Background delivery bookkeeping: when the state last changed (to spot a submission
    # whose process died mid-call), how many deliveries were tried, and when to try next.
    state_changed_at = models.DateTimeField(null=True, blank=True)
    delivery_attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-offered_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["learner", "assessment_id"], name="unique_attempt_per_assessment"
            )
        ]
        indexes = [
            models.Index(fields=["state", "offered_at"]),
            models.Index(fields=["state", "next_attempt_at"]),
            # A learner's latest attempt (the staff list's "latest assessment") is the first
            # entry under the learner: no sort over their history.
            models.Index(
                fields=["learner", "-offered_at", "-id"], name="attempt_learner_latest_idx"
            ),
            # The dashboard's "in progress" and "pending delivery" counts: the few attempts not
            # finished, with every column those counts read, so the index alone answers them.
            models.Index(
                fields=["state", "learner", "offered_at", "submitted_at", "id"],
                condition=NOT_FINISHED,
                name="attempt_unfinished_idx",
            ),
            # The same counts for some learners only (a school's, a teacher's groups'): each
            # learner's unfinished attempts are found under the learner.
            models.Index(
                fields=["learner", "state", "offered_at", "submitted_at", "id"],
                condition=NOT_FINISHED,
                name="attempt_learner_unfinished_idx",
            ),
        ]

    def __str__(self) -> str:
        return gettext("%(title)s #%(assessment_id)s (%(learner)s)") % {
            "title": self.title or gettext("Assessment"),
            "assessment_id": self.assessment_id,
            "learner": self.learner,
        }

    @cached_property
    def questions(self) -> list[Question]:
        """Return the stored questions as the client's types, in display order."""
        return questions_from_json(self.content)

    def set_questions(self, questions: list[Question]) -> None:
        """Keep fetched questions as the attempt's content (stored by the next save)."""
        self.content = questions_to_json(questions)
        self.__dict__.pop("questions", None)

    @property
    def has_content(self) -> bool:
        """Return whether the questions were fetched (erasure empties them again)."""
        return has_questions(self.content)

    @property
    def content_version(self) -> str:
        """Return a text that changes whenever the content is stored again."""
        return version_of_content(self.offered_at, self.state_changed_at, self.session)

    @property
    def is_open(self) -> bool:
        """Return whether the learner may still change answers."""
        return self.state in self.OPEN_STATES


class AttemptAnswer(models.Model):
    """The answer a learner chose for one question, saved on every page."""

    attempt = models.ForeignKey(AssessmentAttempt, on_delete=models.CASCADE, related_name="answers")
    question_id = models.CharField(max_length=200)
    answer_id = models.CharField(max_length=200)
    saved_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["attempt", "question_id"], name="one_answer_per_question"
            )
        ]

    def __str__(self) -> str:
        return f"{self.question_id} -> {self.answer_id}"


class AssessmentResult(models.Model):
    """The results of a completed attempt, with upstream HTML kept raw and sanitized."""

    attempt = models.OneToOneField(
        AssessmentAttempt, on_delete=models.CASCADE, related_name="result"
    )
    loa_score = models.DecimalField(gettext_lazy("LOA score"), max_digits=12, decimal_places=4)
    risk_level = models.CharField(max_length=200)
    trait_title = models.TextField(blank=True)
    trait_copy = models.TextField(blank=True)
    trait_signs_raw = models.TextField(blank=True)
    trait_signs_html = models.TextField(blank=True)
    trait_tips_raw = models.TextField(blank=True)
    trait_tips_html = models.TextField(blank=True)
    result_description_raw = models.TextField(blank=True)
    result_description_html = models.TextField(blank=True)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["risk_level"])]

    def __str__(self) -> str:
        return gettext("Results of %(attempt)s") % {"attempt": self.attempt}

    @property
    def areas_needing_help(self) -> list["FocusArea"]:
        return [area for area in self.focus_areas.all() if area.needs_help_flagged]


class FocusArea(models.Model):
    """One focus area of a result, kept as a row so staff can filter and count."""

    result = models.ForeignKey(
        AssessmentResult, on_delete=models.CASCADE, related_name="focus_areas"
    )
    name = models.CharField(max_length=200)
    needs_help = models.CharField(max_length=100)
    questions_count = models.IntegerField()
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["position", "id"]
        indexes = [models.Index(fields=["name", "needs_help"])]

    def __str__(self) -> str:
        return f"{self.name}: {self.needs_help}"

    @property
    def needs_help_flagged(self) -> bool:
        """Return whether this area needs help ("no", in any case, is the only all-clear)."""
        return needs_help_flagged(self.needs_help)


def version_of_content(
    offered_at: datetime, state_changed_at: datetime | None, session: str
) -> str:
    """Return a text that changes whenever an attempt's content is stored again."""
    # Every fetch brings a new session and state change time; offered_at tells an attempt
    # from a later one that reuses its pk (SQLite can). Plain SQL reads SQLite's times without
    # a zone (they are UTC) where the ORM adds it: both give the same text.
    return "|".join([_utc_text(offered_at), _utc_text(state_changed_at), session])


def _utc_text(moment: datetime | None) -> str:
    if moment is None:
        return ""
    return moment.astimezone(UTC).isoformat() if moment.tzinfo else f"{moment.isoformat()}+00:00"


# The spec does not list the RiskLevel labels (docs/partner-api.md). The ones we know, most
# worrying first, with their severity ("moderate" and "medium" are one level under two names);
# any other label is shown as given and sorts after them.
RISK_LEVELS = {"high": 3, "moderate": 2, "medium": 2, "low": 1}


def risk_rank(risk_level: str) -> int:
    """Return how severe a RiskLevel label is for sorting (0 when the label is unknown)."""
    return RISK_LEVELS.get(risk_level.strip().lower(), 0)


def needs_help_flagged(value: str) -> bool:
    """Return whether an upstream needs_help value asks for help (spec gap: docs/partner-api.md)."""
    return value.strip().lower() != "no"


def fit(model: type[models.Model], field_name: str, value: str) -> str:
    """Cut an upstream string to a field's length (the spec sets no limits; indexes do)."""
    limit = model._meta.get_field(field_name).max_length
    if limit is None or len(value) <= limit:
        return value
    return value[: limit - 1] + "…"
