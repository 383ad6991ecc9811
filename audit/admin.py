from django.contrib import admin

from audit.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """The trail is read-only everywhere, the admin included."""

    list_display = ["at", "actor_username", "action", "learner_ref", "ip_address"]
    list_filter = ["action", "at"]
    search_fields = ["actor_username", "learner_ref", "ip_address"]
    date_hierarchy = "at"
    readonly_fields = [f.name for f in AuditEvent._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
