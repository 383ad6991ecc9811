"""Reads of the group pages: groups with their sizes, a group's members now and before."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q, QuerySet

from assessments.selectors import with_latest_attempt
from classes.access import visible_groups
from classes.models import GroupMembership, SchoolGroup, current_academic_year, learner_model

CANDIDATES_SHOWN = 25


def group_index(user: AbstractBaseUser, *, archived: bool = False) -> QuerySet[SchoolGroup]:
    """Return the current (else archived) groups the user sees, each with its learners now."""
    groups = visible_groups(user)
    groups = (
        groups.archived().order_by("-archived_at", "name", "id") if archived else groups.current()
    )
    return groups.annotate(
        learner_count=Count(
            "memberships",
            filter=Q(memberships__left_at__isnull=True, memberships__learner__status="active"),
        )
    )


def group_members(group: SchoolGroup) -> dict:
    """Return a group's staff, current learners (with their latest attempt) and past members."""
    learners = learner_model().objects
    current = with_latest_attempt(
        learners.registered().filter(
            group_memberships__group=group, group_memberships__left_at__isnull=True
        )
    ).order_by(*learners.model.LIST_ORDER)
    former = (
        GroupMembership.objects.filter(group=group, left_at__isnull=False)
        .filter(learner__status=learners.model.Status.ACTIVE)
        .select_related("learner")
        .order_by("-left_at")
    )
    staff = group.staff.order_by("last_name", "first_name", "username")
    return {"members": list(current), "former_members": list(former), "staff": list(staff)}


def has_archived_groups(user: AbstractBaseUser) -> bool:
    """Return whether the user sees any archived group (the class list links to them)."""
    return visible_groups(user).archived().exists()


def group_candidates(group: SchoolGroup, query: str) -> QuerySet:
    """Return registered learners of the group's school matching a search, not in it now.

    Never one who left the school: they join no class.
    """
    learners = learner_model().objects
    in_group = group.memberships.filter(left_at__isnull=True).values("learner_id")
    matching = (
        learners.matching(query=query)
        .filter(school_id=group.school_id, left_at__isnull=True)
        .exclude(pk__in=in_group)
    )
    return learners.filter(pk__in=matching[:CANDIDATES_SHOWN].values("pk")).order_by(
        *learners.model.LIST_ORDER
    )


def groups_by_name(groups: QuerySet[SchoolGroup] | None = None) -> dict[str, int]:
    """Return each group's id (of `groups`, else all) by its case-folded name; none archived.

    Where a name is used in several years it means this year's group (else the latest).
    """
    year = current_academic_year()
    found: dict[str, int] = {}
    # Oldest first, this year's last: a later entry replaces an earlier one of the same name.
    groups = SchoolGroup.objects.all() if groups is None else groups
    # A name never means last year's archived class: nobody is put in it any more.
    rows = groups.current().values_list("name", "academic_year", "pk")
    for name, _year, pk in sorted(rows, key=lambda row: (row[1] == year, row[1])):
        found[name.casefold()] = pk
    return found
