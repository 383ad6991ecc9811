from django.contrib import admin

from imports.models import ImportJob


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    """Bulk registrations, read-only: staff run them from the Learners pages."""

    list_display = [
        "pk",
        "filename",
        "state",
        "total_rows",
        "valid_rows",
        "invalid_rows",
        "created_by",
        "created_at",
        "finished_at",
    ]
    list_filter = ["state", "created_at"]
    list_select_related = ["created_by"]
    # Rows (with their encrypted passwords) are not shown here.

    def get_readonly_fields(self, request, obj=None) -> list[str]:
        return [field.name for field in ImportJob._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
