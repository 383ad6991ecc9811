"""Who runs a group's lessons: its own staff, and partner admins (for cover)."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.http import Http404

from learners.access import visible_group_or_404
from learners.models import GroupStaff, SchoolGroup
from portal.access import is_partner_admin


def runs_lessons(user: AbstractBaseUser, group: SchoolGroup) -> bool:
    """Return whether the user may print the group's cards and open or close its sign-in."""
    if is_partner_admin(user):
        return True
    return GroupStaff.objects.filter(group=group, user=user).exists()


def lesson_group_or_404(user: AbstractBaseUser, pk: int) -> SchoolGroup:
    """Return the group if the user runs its lessons, else 404 (as for a group not theirs)."""
    group = visible_group_or_404(user, pk)
    if not runs_lessons(user, group):
        raise Http404
    return group
