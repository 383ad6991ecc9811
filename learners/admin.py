from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from learners.models import Learner


@admin.register(Learner)
class LearnerAdmin(admin.ModelAdmin):
    list_display = [
        "username",
        "first_name",
        "last_name",
        "level",
        "status",
        "upstream_id_hint",
        "registered_by",
        "registered_at",
    ]
    list_filter = ["level", "status", "registered_at"]
    search_fields = ["username", "first_name", "last_name", "email"]
    # The upstream learner id travels as a credential-like header (learnerid): pages show
    # only its last characters, enough to tell two learners apart when talking to support.
    exclude = ["upstream_user_id"]
    # The upstream holds the same identity, names and level: changing them here would not
    # change them there (and could put personal data back into an erased record). Only the
    # audited erasure (privacy.services.learner_erase) may say when personal data was erased:
    # set here it would mark the learner erased with nothing erased and no audit event.
    readonly_fields = [
        "user",
        "upstream_id_hint",
        "username",
        "first_name",
        "last_name",
        "email",
        "dob",
        "level",
        "status",
        "registered_by",
        "registered_at",
        "erased_at",
    ]
    list_select_related = ["registered_by"]
    date_hierarchy = "registered_at"

    @admin.display(description=_("upstream learner id"))
    def upstream_id_hint(self, learner: Learner) -> str:
        """Show only the end of the upstream id."""
        if not learner.upstream_user_id:
            return "–"
        return "…" + learner.upstream_user_id[-4:]

    def has_add_permission(self, request) -> bool:
        # Learners are registered through the portal page, which registers them upstream too.
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        # The upstream keeps the learner; removing personal data is a separate, audited step.
        return False
