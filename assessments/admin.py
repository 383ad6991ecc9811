from django.contrib import admin

from assessments.models import AssessmentAttempt, AssessmentResult, AttemptAnswer, FocusArea


class ReadOnlyAdmin(admin.ModelAdmin):
    """The upstream owns these records: the admin shows them and never edits them."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class AttemptAnswerInline(admin.TabularInline):
    model = AttemptAnswer
    extra = 0
    can_delete = False
    readonly_fields = ["question_id", "answer_id", "saved_at"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(AssessmentAttempt)
class AssessmentAttemptAdmin(admin.ModelAdmin):
    list_display = [
        "assessment_id",
        "learner",
        "title",
        "state",
        "offered_at",
        "submitted_at",
        "completed_at",
    ]
    list_filter = ["state", "target_group", "level", "offered_at"]
    search_fields = ["assessment_id", "learner__username", "learner__last_name", "title"]
    list_select_related = ["learner"]
    # Local bookkeeping (state, error detail) stays editable for an admin putting a stuck
    # attempt right; everything that came from the upstream is read-only.
    readonly_fields = [
        "learner",
        "assessment_id",
        "assessment_version",
        "target_group",
        "offer_status",
        "title",
        "level",
        "version",
        "preassess",
        "content",
        "session",
        "offered_at",
        "started_at",
        "last_saved_at",
        "submitted_at",
        "completed_at",
    ]
    inlines = [AttemptAnswerInline]
    date_hierarchy = "offered_at"

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        # Deleting an attempt would delete a learner's answers and results with it.
        return False


@admin.register(AttemptAnswer)
class AttemptAnswerAdmin(ReadOnlyAdmin):
    list_display = ["attempt", "question_id", "answer_id", "saved_at"]
    search_fields = ["attempt__assessment_id", "attempt__learner__username", "question_id"]
    list_select_related = ["attempt__learner"]


class FocusAreaInline(admin.TabularInline):
    model = FocusArea
    extra = 0
    can_delete = False
    readonly_fields = ["name", "needs_help", "questions_count", "position"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(AssessmentResult)
class AssessmentResultAdmin(ReadOnlyAdmin):
    list_display = ["attempt", "loa_score", "risk_level", "trait_title", "received_at"]
    list_filter = ["risk_level", "received_at"]
    search_fields = ["attempt__assessment_id", "attempt__learner__username", "trait_title"]
    list_select_related = ["attempt__learner"]
    inlines = [FocusAreaInline]
    # The raw upstream HTML is shown as text (escaped), never rendered.
    readonly_fields = [f.name for f in AssessmentResult._meta.fields]


@admin.register(FocusArea)
class FocusAreaAdmin(ReadOnlyAdmin):
    list_display = ["name", "needs_help", "questions_count", "result"]
    list_filter = ["name", "needs_help"]
    search_fields = ["name", "result__attempt__learner__username"]
    list_select_related = ["result__attempt__learner"]
