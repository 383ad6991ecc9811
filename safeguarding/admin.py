from django.contrib import admin

from safeguarding.models import Alert, AlertEmail


class AlertEmailInline(admin.TabularInline):
    model = AlertEmail
    extra = 0
    can_delete = False
    fields = ["purpose", "state", "tries", "sent_at", "last_error"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Alert)
class AlertAdmin(admin.ModelAdmin):
    """Read-only here: leads acknowledge alerts on their pages, which audit it."""

    list_display = ["pk", "kind", "reason", "raised_at", "escalated_at", "acknowledged_at"]
    list_filter = ["kind", "reason"]
    inlines = [AlertEmailInline]

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
