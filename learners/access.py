"""Which learners and groups a member of staff sees: the rule every staff page applies."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.http import Http404

from accounts.access import in_working_schools, sees_whole_school, working_school_ids
from classes.models import GroupMembership
from learners.models import Learner


def visible_learners(user: AbstractBaseUser, learners: QuerySet[Learner] | None = None):
    """Return the learners (of `learners`, else all) whose records the user may see."""
    learners = Learner.objects.all() if learners is None else learners
    # Another school's learner is not there for them, as another group's is for a teacher.
    learners = in_working_schools(user, learners)
    if sees_whole_school(user):
        return learners
    # A learner with no group is seen by the whole-school roles only.
    return learners.filter(pk__in=learners_of_groups_of(user))


def learners_of_groups_of(user: AbstractBaseUser) -> QuerySet:
    """Return the ids of the learners now in a group the user works with, in the school(s).

    Last year's archived classes give no sight of their pupils, whatever their memberships say.
    """
    memberships = GroupMembership.objects.filter(
        left_at__isnull=True, group__staff_links__user=user, group__archived_at__isnull=True
    )
    return in_working_schools(user, memberships, "group__school_id").values("learner_id")


def learner_scope(user: AbstractBaseUser) -> QuerySet | None:
    """Return the ids of the learners the user sees, or None when that is every learner."""
    if not sees_whole_school(user):
        return learners_of_groups_of(user)
    schools = working_school_ids(user)
    if schools is None:
        return None
    return Learner.objects.filter(school_id__in=schools).values("id")


def group_scope(user: AbstractBaseUser) -> QuerySet | None:
    """Return the ids of the learners of the user's groups, or None when they see whole schools.

    With working_school_ids, the same learners as learner_scope, named so that a whole school's
    rows are read from indexes that start with the school (docs/query-plans.md), not joined to a
    list of its learners' ids.
    """
    return None if sees_whole_school(user) else learners_of_groups_of(user)


def visible_learner_or_404(user: AbstractBaseUser, pk: int, **conditions) -> Learner:
    """Return the learner if the user may see them, else 404 (as if there were none)."""
    learner = visible_learners(user, Learner.objects.filter(pk=pk, **conditions)).first()
    if learner is None:
        raise Http404
    return learner
