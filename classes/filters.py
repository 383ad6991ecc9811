"""The `group` filter staff lists, the dashboard and exports share, and a learner's classes."""

from django import forms
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet
from django.utils.translation import gettext, gettext_lazy

from classes.access import visible_groups
from classes.models import GroupMembership, GroupStaff, SchoolGroup

# The query parameter every list, the dashboard and both CSV exports read: a group's id.
GROUP_PARAM = "group"
# Where a learner's current memberships (with their groups) are prefetched to.
MEMBERSHIPS_NOW = "memberships_now"


class GroupFilterField(forms.ModelChoiceField):
    """A class to filter by: one the user sees, their own first, never another school's.

    The menu offers current classes only; an archived one the user sees is still accepted (a
    bookmark, a link from its page) and shown, chosen, under "Archived classes".
    """

    def __init__(self, user: AbstractBaseUser, **kwargs):
        self.user = user
        kwargs.setdefault("label", gettext_lazy("Class"))
        kwargs.setdefault("required", False)
        kwargs.setdefault(
            "error_messages",
            {
                "invalid_choice": gettext_lazy(
                    "Choose a class from the list: that one is not a class you can see."
                )
            },
        )
        super().__init__(queryset=visible_groups(user), **kwargs)
        self._menu: list | None = None
        self._offered: list[SchoolGroup] = []

    def label_from_instance(self, group: SchoolGroup) -> str:
        return f"{group.name} ({group.academic_year})"

    def offered(self, chosen: str | None = None) -> list[SchoolGroup]:
        """Return the current classes the menu offers, the user's own first (one query)."""
        self.menu(chosen)
        return self._offered

    def menu(self, chosen: str | None = None) -> list:
        """Return the menu: "Your classes", then "Other classes" (and an archived chosen one)."""
        if self._menu is not None:
            return self._menu
        mine = GroupStaff.objects.filter(group=OuterRef("pk"), user=self.user)
        shown = Q(archived_at__isnull=True)
        if chosen and str(chosen).isdigit():
            shown |= Q(pk=int(chosen))
        groups = (
            self.queryset.filter(shown)
            .annotate(mine=Exists(mine))
            .order_by("-academic_year", "name", "id")
        )
        own, other, archived = [], [], []
        mine_first = []
        for group in groups:
            choice = (str(group.pk), self.label_from_instance(group))
            if group.archived_at is not None:
                archived.append(choice)
            else:
                (own if group.mine else other).append(choice)
                mine_first.append(group)
        self._offered = sorted(mine_first, key=lambda group: not group.mine)
        menu: list = [("", gettext("All classes"))]
        for title, choices in (
            (gettext("Your classes"), own),
            (gettext("Other classes"), other),
            (gettext("Archived classes"), archived),
        ):
            if choices:
                menu.append((title, choices))
        self._menu = menu
        return menu


def add_group_filter(form: forms.Form, user: AbstractBaseUser) -> None:
    """Give a filter form the `group` field, its menu built for what it was sent."""
    field = GroupFilterField(user)
    chosen = form.data.get(GROUP_PARAM) if form.is_bound else None
    # A callable: read from the database only if the menu is drawn (never for a CSV).
    field.widget.choices = lambda: field.menu(chosen)
    form.fields[GROUP_PARAM] = field


def offered_by(form: forms.Form) -> list[SchoolGroup]:
    """Return the current classes a form's `group` menu offers, the user's own first."""
    field = form.fields[GROUP_PARAM]
    return field.offered(form.data.get(GROUP_PARAM) if form.is_bound else None)


def group_refused(form: forms.Form) -> bool:
    """Return whether the form was sent a class the user may not filter by (or none such)."""
    return form.is_bound and GROUP_PARAM in form.errors


def group_learner_ids(group: SchoolGroup) -> QuerySet:
    """Return the ids of a group's learners: now, or for an archived one, when it archived."""
    memberships = GroupMembership.objects.filter(group=group)
    if group.archived_at is None:
        memberships = memberships.filter(left_at__isnull=True)
    else:
        # Archiving ended every membership then (classes.services.group_archive).
        memberships = memberships.filter(left_at__gte=group.archived_at)
    return memberships.values("learner_id")


def prefetch_current_groups(through: str = "") -> Prefetch:
    """Return the prefetch of each learner's current classes, by name, to MEMBERSHIPS_NOW."""
    memberships = (
        GroupMembership.objects.filter(left_at__isnull=True, group__archived_at__isnull=True)
        .select_related("group")
        .only("learner_id", "group__name")
        .order_by("group__name", "group_id")
    )
    return Prefetch(f"{through}group_memberships", queryset=memberships, to_attr=MEMBERSHIPS_NOW)


def current_group_names(learner_ids: list[int]) -> dict[int, str]:
    """Return each learner's current classes, "; "-separated, in one query (for exports)."""
    rows = (
        GroupMembership.objects.filter(
            learner_id__in=learner_ids, left_at__isnull=True, group__archived_at__isnull=True
        )
        .order_by("learner_id", "group__name", "group_id")
        .values_list("learner_id", "group__name")
    )
    names: dict[int, list[str]] = {}
    for learner_id, name in rows:
        names.setdefault(learner_id, []).append(name)
    # A class name may hold a comma ("Maths, set 1"), never a line: "; " as for focus areas.
    return {learner_id: "; ".join(found) for learner_id, found in names.items()}
