"""Which classes a member of staff sees: every class for whole-school roles, else their own."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.http import Http404

from accounts.access import in_working_schools, sees_whole_school
from classes.models import SchoolGroup


def visible_groups(user: AbstractBaseUser) -> QuerySet[SchoolGroup]:
    """Return the groups the user sees: every group for whole-school roles, else their own.

    Archived ones included: their pages still open, read-only, for their history.
    """
    groups = in_working_schools(user, SchoolGroup.objects.all())
    if sees_whole_school(user):
        return groups
    return groups.filter(staff_links__user=user)


def offered_groups(user: AbstractBaseUser) -> QuerySet[SchoolGroup]:
    """Return the groups the user sees that a menu may offer: never an archived one."""
    return visible_groups(user).current()


def visible_group_or_404(user: AbstractBaseUser, pk: int) -> SchoolGroup:
    """Return the group if the user sees it, else 404."""
    group = visible_groups(user).filter(pk=pk).first()
    if group is None:
        raise Http404
    return group
