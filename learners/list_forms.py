"""The learner list's search, filters and order, read from its query string (and its CSV's)."""

from django import forms
from django.contrib.auth.models import AbstractBaseUser
from django.utils.translation import gettext_lazy

from classes.filters import GROUP_PARAM, add_group_filter, group_refused
from learners.models import Level
from learners.selectors import (
    BY_LATEST_RESULT,
    BY_NAME,
    BY_REGISTERED,
    BY_RISK,
    NEEDS_HELP,
    NO_ASSESSMENT,
    NO_HELP_NEEDED,
    RESULT_SORTS,
    LearnerListFilters,
)


class LearnerSearchForm(forms.Form):
    """Search, filter and sort the learner list (and its CSV), read from the query string."""

    q = forms.CharField(required=False, label=gettext_lazy("Search"), max_length=100)
    level = forms.ChoiceField(
        label=gettext_lazy("Level"),
        choices=[("", gettext_lazy("All levels")), *Level.choices],
        required=False,
    )
    status = forms.ChoiceField(
        label=gettext_lazy("Latest assessment"),
        choices=[
            ("", gettext_lazy("Any or none")),
            (NO_ASSESSMENT, gettext_lazy("None yet")),
            ("open", gettext_lazy("Not finished")),
            ("sent", gettext_lazy("Sent, waiting for results")),
            ("completed", gettext_lazy("Completed")),
            ("refused", gettext_lazy("Refused by the assessment service")),
        ],
        required=False,
    )
    risk = forms.ChoiceField(
        label=gettext_lazy("Latest risk level"),
        choices=[
            ("", gettext_lazy("Any or none")),
            ("high", gettext_lazy("High")),
            ("moderate", gettext_lazy("Moderate or medium")),
            ("low", gettext_lazy("Low")),
        ],
        required=False,
    )
    needs_help = forms.ChoiceField(
        label=gettext_lazy("Needs help (latest results)"),
        choices=[
            ("", gettext_lazy("Either, or no results")),
            (NEEDS_HELP, gettext_lazy("Yes, in at least one area")),
            (NO_HELP_NEEDED, gettext_lazy("No, in no area")),
        ],
        required=False,
    )
    sort = forms.ChoiceField(
        label=gettext_lazy("Sort by"),
        choices=[
            (BY_NAME, gettext_lazy("Name, A to Z")),
            (BY_REGISTERED, gettext_lazy("Registered, newest first")),
            (BY_LATEST_RESULT, gettext_lazy("Latest results, newest first")),
            (BY_RISK, gettext_lazy("Risk level, highest first")),
        ],
        required=False,
    )

    def __init__(self, *args, user: AbstractBaseUser, with_results: bool, **kwargs):
        super().__init__(*args, **kwargs)
        add_group_filter(self, user)
        if not with_results:
            # Staff who do not read results cannot find learners by them either.
            del self.fields["risk"], self.fields["needs_help"]
            sort = self.fields["sort"]
            sort.choices = [(k, v) for k, v in sort.choices if k not in RESULT_SORTS]

    @property
    def group_refused(self) -> bool:
        """Return whether a class was asked for that the user may not see: nothing is listed."""
        return group_refused(self)

    def filters(self) -> LearnerListFilters:
        """Return the valid search, filters and order (none at all when any is invalid)."""
        data = self.cleaned_data if self.is_valid() else {}
        return LearnerListFilters(
            query=data.get("q", "").strip(),
            level=data.get("level", ""),
            status=data.get("status", ""),
            risk=data.get("risk", ""),
            needs_help=data.get("needs_help", ""),
            sort=data.get("sort") or BY_NAME,
            group=data.get(GROUP_PARAM),
        )
