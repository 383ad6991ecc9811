from django.contrib import admin

from followups.models import FollowUp, FollowUpArea, FollowUpNote


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class FollowUpAreaInline(ReadOnlyInline):
    model = FollowUpArea
    fields = ["name"]


class FollowUpNoteInline(ReadOnlyInline):
    model = FollowUpNote
    fields = ["created_at", "author_username", "text"]
    readonly_fields = fields


@admin.register(FollowUp)
class FollowUpAdmin(admin.ModelAdmin):
    """Read-only here: changes go through the follow-up pages, which audit every one."""

    list_display = ["pk", "learner", "risk_level", "status", "assignee", "due_date", "created_at"]
    list_filter = ["status", "risk_level", "due_date"]
    list_select_related = ["learner", "assignee"]
    search_fields = ["learner__username", "learner__last_name", "areas__name"]
    inlines = [FollowUpAreaInline, FollowUpNoteInline]

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
