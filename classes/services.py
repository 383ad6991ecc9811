"""Groups: creating and changing them, and moving learners and staff in and out (audited)."""

from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from assessments.learner_results import forget_group_contacts
from audit.models import AuditEvent
from audit.services import audit_record
from classes.archived import group_lock_open
from classes.models import GroupMembership, GroupStaff, SchoolGroup

if TYPE_CHECKING:  # the learners app sits above classes: its type only, never loaded
    from learners.models import Learner

Action = AuditEvent.Action


class LearnersLeft(Exception):
    """Learners who left the school join no class: who they are."""

    def __init__(self, learners: list["Learner"]):
        super().__init__(f"{len(learners)} learner(s) left the school")
        self.learners = learners


@transaction.atomic
def group_create(
    *,
    name: str,
    level: str,
    kind: str = SchoolGroup.Kind.TEACHING_CLASS,
    academic_year: str = "",
    contact: str = "",
    staff: Iterable[AbstractBaseUser] = (),
    created_by: AbstractBaseUser | None,
    address: str | None,
) -> SchoolGroup:
    """Create a group with its staff and record who did it."""
    group = SchoolGroup(name=name, level=level, kind=kind, contact=contact)
    if academic_year:
        group.academic_year = academic_year
    group.save()
    staff = list(staff)
    GroupStaff.objects.bulk_create(GroupStaff(group=group, user=user) for user in staff)
    audit_record(
        actor=created_by,
        address=address,
        action=Action.GROUP_CREATED,
        group=group.pk,
        name=group.name,
        kind=group.kind,
        level=group.level,
        academic_year=group.academic_year,
        contact=group.contact,
        staff=sorted(user.get_username() for user in staff),
    )
    return group


@transaction.atomic
def group_update(
    *,
    group: SchoolGroup,
    name: str,
    level: str,
    kind: str,
    academic_year: str,
    contact: str,
    staff: Iterable[AbstractBaseUser],
    changed_by: AbstractBaseUser | None,
    address: str | None,
) -> list[str]:
    """Change a group's details and staff; return the names of what changed (audited).

    Raises GroupArchived for last year's class.
    """
    # Compared with the stored row, locked: not with `group`, which a bound form has already
    # changed in memory, and two admins saving at once each see the other's change.
    group = group_lock_open(group)
    changes: dict[str, object] = {}
    for field, value in (
        ("name", name),
        ("level", level),
        ("kind", kind),
        ("academic_year", academic_year),
        ("contact", contact),
    ):
        if getattr(group, field) != value:
            changes[field] = value
            setattr(group, field, value)
    if changes:
        group.save()
    wanted = {user.pk: user for user in staff}
    current = set(group.staff_links.values_list("user_id", flat=True))
    added = [wanted[pk] for pk in wanted.keys() - current]
    removed = current - wanted.keys()
    if added:
        GroupStaff.objects.bulk_create(GroupStaff(group=group, user=user) for user in added)
    if removed:
        group.staff_links.filter(user_id__in=removed).delete()
    if added or removed:
        changes["staff"] = sorted(user.get_username() for user in wanted.values())
    if changes:
        audit_record(
            actor=changed_by,
            address=address,
            action=Action.GROUP_CHANGED,
            group=group.pk,
            **changes,
        )
    return list(changes)


@transaction.atomic
def group_learners_add(
    *,
    group: SchoolGroup,
    learners: Iterable["Learner"],
    added_by: AbstractBaseUser | None,
    address: str | None,
) -> int:
    """Put learners in a group (those already in it stay as they are); return how many joined.

    Raises GroupArchived for last year's class, LearnersLeft if any learner left the school.
    """
    # Locking the group row makes two staff adding the same learner at once take turns,
    # so the second sees the first's membership instead of breaking the constraint.
    group_lock_open(group)
    learners = list(learners)
    _refuse_leavers(learners)
    already = set(
        group.memberships.filter(left_at__isnull=True).values_list("learner_id", flat=True)
    )
    joining = [learner for learner in learners if learner.pk not in already]
    GroupMembership.objects.bulk_create(
        GroupMembership(group=group, learner=learner, added_by=added_by) for learner in joining
    )
    # bulk_create sends no signal: the cached contacts of their results pages are dropped here.
    forget_group_contacts(learner.pk for learner in joining)
    for learner in joining:
        audit_record(
            actor=added_by,
            address=address,
            action=Action.GROUP_JOINED,
            learner=learner,
            group=group.pk,
            name=group.name,
        )
    return len(joining)


def _refuse_leavers(learners: list["Learner"]) -> None:
    """Raise LearnersLeft if any of the learners left the school."""
    left = [learner for learner in learners if learner.left_at is not None]
    if left:
        raise LearnersLeft(left)


def level_differs(group: SchoolGroup, learner: "Learner") -> bool:
    """Return whether the learner's level is not the group's (either unset: not known)."""
    return bool(group.level and learner.level and learner.level != group.level)


@transaction.atomic
def group_learners_add_chosen(
    *,
    group: SchoolGroup,
    learners: Iterable["Learner"],
    other_levels_confirmed: bool,
    added_by: AbstractBaseUser | None,
    address: str | None,
) -> tuple[int, list["Learner"]]:
    """Add the learners staff chose; return (how many joined, those of another level held).

    While any learner chosen is of another level than the group's and staff have not
    confirmed, nobody is added: a secondary pupil in a primary class is more often a slip than
    a choice, and staff answer for the whole choice at once. Raises as group_learners_add,
    for any learner chosen, before adding anyone.
    """
    learners = list(learners)
    _refuse_leavers(learners)
    if not other_levels_confirmed:
        held = [learner for learner in learners if level_differs(group, learner)]
        if held:
            return 0, held
    joined = group_learners_add(group=group, learners=learners, added_by=added_by, address=address)
    return joined, []


@transaction.atomic
def group_learner_remove(
    *,
    group: SchoolGroup,
    learner: "Learner",
    removed_by: AbstractBaseUser | None,
    address: str | None,
) -> bool:
    """Take a learner out of a group, keeping the membership as history; False if not in it.

    Raises GroupArchived for last year's class: its history stays as it was.
    """
    group_lock_open(group)
    left = group.memberships.filter(learner=learner, left_at__isnull=True).update(
        left_at=timezone.now(), removed_by=removed_by
    )
    forget_group_contacts([learner.pk])  # update() sends no signal
    if left:
        audit_record(
            actor=removed_by,
            address=address,
            action=Action.GROUP_LEFT,
            learner=learner,
            group=group.pk,
            name=group.name,
        )
    return bool(left)


def learner_current_groups(learner: "Learner") -> list[SchoolGroup]:
    """Return the groups a learner is in now, by name (never an archived one)."""
    return list(
        SchoolGroup.objects.current()
        .filter(memberships__learner=learner, memberships__left_at__isnull=True)
        .order_by("name", "id")
    )


@transaction.atomic
def learner_groups_leave(
    *, learner: "Learner", removed_by: AbstractBaseUser | None, address: str | None
) -> int:
    """Take a learner out of every group they are in (history kept); return how many."""
    groups = learner_current_groups(learner)
    for group in groups:
        group_learner_remove(group=group, learner=learner, removed_by=removed_by, address=address)
    return len(groups)


@transaction.atomic
def group_archive(
    *, group: SchoolGroup, archived_by: AbstractBaseUser | None, address: str | None
) -> bool:
    """Archive last year's group: read-only, its members' time in it kept; False if archived."""
    now = timezone.now()
    archived = SchoolGroup.objects.filter(pk=group.pk, archived_at__isnull=True).update(
        archived_at=now
    )
    if not archived:
        return False
    group.archived_at = now
    members = list(
        group.memberships.filter(left_at__isnull=True).values_list("learner_id", flat=True)
    )
    # Ended, not removed: the year's membership is its history (who was in 7B last year).
    group.memberships.filter(left_at__isnull=True).update(left_at=now, removed_by=archived_by)
    forget_group_contacts(members)  # update() sends no signal
    audit_record(
        actor=archived_by,
        address=address,
        action=Action.GROUP_ARCHIVED,
        group=group.pk,
        name=group.name,
        academic_year=group.academic_year,
        members=len(members),
    )
    return True
