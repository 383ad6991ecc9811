"""Who runs a group's lessons: its own staff, and partner admins (for cover)."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import QuerySet
from django.http import Http404

from accounts.access import is_partner_admin
from classes.access import visible_group_or_404
from classes.archived import group_check_open
from classes.models import SchoolGroup
from learners.models import Learner


def lesson_groups(user: AbstractBaseUser) -> QuerySet[SchoolGroup]:
    """Return the groups whose cards the user may print and whose sign-in they may open.

    Never last year's archived classes: their cards and sign-in are closed.
    """
    groups = SchoolGroup.objects.current()
    return groups if is_partner_admin(user) else groups.filter(staff_links__user=user)


def runs_lessons(user: AbstractBaseUser, group: SchoolGroup) -> bool:
    """Return whether the user runs this group's lessons."""
    return lesson_groups(user).filter(pk=group.pk).exists()


def lesson_group_or_404(user: AbstractBaseUser, pk: int) -> SchoolGroup:
    """Return the group if the user runs its lessons, else 404 (as for a group not theirs)."""
    group = visible_group_or_404(user, pk)
    if not runs_lessons(user, group):
        raise Http404
    return group


def lesson_group_to_change(user: AbstractBaseUser, pk: int) -> SchoolGroup:
    """Return the group whose cards or sign-in the user is about to change.

    GroupArchived for an archived class the user sees (the page says why); else as
    lesson_group_or_404.
    """
    group = visible_group_or_404(user, pk)
    group_check_open(group)
    if not runs_lessons(user, group):
        raise Http404
    return group


def learner_lesson_group(user: AbstractBaseUser, learner: Learner) -> SchoolGroup | None:
    """Return the learner's current group whose lessons the user runs (first by name), if any."""
    return (
        lesson_groups(user)
        .filter(memberships__learner=learner, memberships__left_at__isnull=True)
        .order_by("name")
        .first()
    )
