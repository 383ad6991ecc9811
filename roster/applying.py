"""Applying a sync's plan, school by school: classes, staff, leavers, returners, changes, joiners.

Every step checks the state it changes (a group already archived, a learner already gone, a
teacher already linked), so a plan applied twice, or again after a crash, changes nothing
more. A school's part is one transaction. The roster grants no power: a teacher it brings is
a new teacher's account; an account it matches keeps the role the portal gave it in the
school, and one of another school (no role here) is given the teacher role here, as the
preview says, so that it sees the classes it is linked to.
"""

from __future__ import annotations

import logging

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from accounts.models import TRUST_ROLES, SchoolRole, StaffProfile, StaffRole
from accounts.selectors import staff_accounts
from accounts.services import staff_role_set
from accounts.usernames import USERNAME_MAX_LENGTH, username_normal_form
from audit.models import AuditEvent
from audit.services import audit_record
from classes.models import GroupStaff, SchoolGroup
from classes.services import (
    group_archive,
    group_create,
    group_learner_remove,
    group_learners_add,
    group_update,
    learner_groups_leave,
)
from learners.models import Learner
from learners.school_records import learner_leave, learner_records_change, learner_return
from lessons.services import learner_cards_void
from roster.joining import joiners_register, when
from roster.models import RosterClass, RosterPerson, RosterSync
from roster.plan import NewClass, SchoolPlan, StaffMember, SyncPlan
from roster.planning_classes import NAME_MAX_LENGTH
from schools.context import working_in
from schools.models import School
from staff.services import staff_add

logger = logging.getLogger(__name__)

User = get_user_model()


def plan_apply(*, sync: RosterSync, actor: AbstractBaseUser | None, address: str | None) -> None:
    """Apply the sync's plan (exactly as previewed), school by school, each in a transaction."""
    plan = SyncPlan.from_json(sync.plan)
    for school in plan.schools:
        with working_in(school.school_id), transaction.atomic():
            _school_apply(sync, school, actor=actor, address=address)
        logger.info("Roster sync %s applied to school %s", sync.pk, school.code)


def _school_apply(
    sync: RosterSync, school: SchoolPlan, *, actor: AbstractBaseUser | None, address: str | None
) -> None:
    who = {"actor": actor, "address": address}
    # Last year's classes go first, so that this year's (maybe of the same names) can be made.
    for archived in school.archived:
        group = SchoolGroup.objects.filter(pk=archived.group_id).first()
        if group is not None:
            group_archive(group=group, archived_by=actor, address=address)
    for new in school.new_classes:
        _class_make(school.school_id, new, **who)
    for change in school.class_changes:
        group = SchoolGroup.objects.filter(pk=change.group_id).first()
        if group is not None:
            group_update(
                group=group, name=change.name, level=change.level, kind=change.kind,
                academic_year=group.academic_year, contact=group.contact,
                staff=list(group.staff.all()), changed_by=actor, address=address,
            )  # fmt: skip
            if change.last_modified:
                RosterClass.objects.filter(group=group).update(
                    last_modified=when(change.last_modified)
                )
    groups = dict(
        RosterClass.objects.filter(school_id=school.school_id).values_list("sourced_id", "group")
    )
    for member in school.staff:
        _teacher_apply(school.school_id, member, groups, **who)
    for leaver in school.leavers:
        learner = _learner(school.school_id, leaver.learner_id)
        if learner is not None:
            _leave(learner, leaver.last_modified, **who)
    for returner in school.returners:
        learner = _learner(school.school_id, returner.learner_id)
        if learner is None:
            continue
        learner_return(learner=learner, returned_by=actor, address=address)
        _groups_join(learner, returner.class_ids, groups, **who)
        _person_link(school.school_id, returner.sourced_id, learner=learner,
                     grade=returner.grade, last_modified=returner.last_modified)  # fmt: skip
    # Learners the portal had (registered by hand, or by an earlier sync's run) now linked.
    for matched in school.matched:
        learner = _learner(school.school_id, matched.learner_id)
        if learner is None:
            continue
        _person_link(school.school_id, matched.sourced_id, learner=learner,
                     grade=matched.grade, last_modified=matched.last_modified)  # fmt: skip
        _groups_join(learner, matched.class_ids, groups, **who)
    for change in school.changes:
        learner = _learner(school.school_id, change.learner_id)
        if learner is None:
            continue
        wanted = dict(change.details)
        if change.level_to:
            wanted["level"] = change.level_to
        if wanted:
            learner_records_change(learner=learner, changed_by=actor, address=address, **wanted)
        _groups_join(learner, change.classes_joined, groups, **who)
        # An archived group's memberships ended with it (group_archive): nothing to leave.
        for group in SchoolGroup.objects.current().filter(pk__in=change.groups_left):
            group_learner_remove(group=group, learner=learner, removed_by=actor, address=address)
        _person_link(school.school_id, change.sourced_id, learner=learner,
                     grade=change.grade, last_modified=change.last_modified)  # fmt: skip
    joiners_register(sync=sync, school=school, groups=groups, **who)


def _learner(school_id: int, learner_id: int) -> Learner | None:
    """Return the school's registered learner (None if erased or not theirs)."""
    return (
        Learner.objects.filter(pk=learner_id, school_id=school_id, status=Learner.Status.ACTIVE)
        .select_related("user")
        .first()
    )


def _leave(
    learner: Learner, modified: str, *, actor: AbstractBaseUser | None, address: str | None
) -> None:
    """A leaver: out of their groups, cards voided, no sign-in; follow-ups stay with staff."""
    if modified:
        # The leaving row's date: a late, older delta must not bring them back.
        RosterPerson.objects.filter(learner=learner).update(last_modified=when(modified))
    groups = learner_groups_leave(learner=learner, removed_by=actor, address=address)
    cards = learner_cards_void(learner=learner, voided_by=actor)
    learner_leave(
        learner=learner, left_by=actor, address=address, groups_left=groups, cards_voided=cards
    )


def _groups_join(
    learner: Learner,
    class_ids: list[str],
    groups: dict[str, int],
    *,
    actor: AbstractBaseUser | None,
    address: str | None,
) -> None:
    wanted = [groups[class_id] for class_id in class_ids if class_id in groups]
    for group in SchoolGroup.objects.filter(pk__in=wanted, archived_at__isnull=True):
        group_learners_add(group=group, learners=[learner], added_by=actor, address=address)


def _class_make(
    school_id: int, new: NewClass, *, actor: AbstractBaseUser | None, address: str | None
) -> None:
    """Make the roster's class a group; one staff made by hand is never taken over."""
    link = (
        RosterClass.objects.select_related("group")
        .filter(school_id=school_id, sourced_id=new.sourced_id)
        .first()
    )
    if link is not None and link.group.archived_at is None:
        return  # made already
    name = new.name
    taken = SchoolGroup.objects.filter(
        school_id=school_id, name__iexact=name, academic_year=new.academic_year
    )
    if taken.exists():
        # A group of that name made since the preview: told apart as the planner does.
        suffix = " (roster)" if new.kind == SchoolGroup.Kind.YEAR_GROUP else f" ({new.sourced_id})"
        name = name[: max(NAME_MAX_LENGTH - len(suffix), 1)] + suffix[:NAME_MAX_LENGTH]
    group = group_create(
        name=name, level=new.level, kind=new.kind, academic_year=new.academic_year,
        created_by=actor, address=address,
    )  # fmt: skip
    modified = when(new.last_modified)
    if link is None:
        RosterClass.objects.create(
            school_id=school_id, sourced_id=new.sourced_id, group=group, last_modified=modified
        )
    else:
        # Last year's class under the same sourcedId: it stays archived, this year's is new.
        RosterClass.objects.filter(pk=link.pk).update(group=group, last_modified=modified)


def _teacher_apply(
    school_id: int,
    member: StaffMember,
    groups: dict[str, int],
    *,
    actor: AbstractBaseUser | None,
    address: str | None,
) -> None:
    """Link the roster's teacher to an account (made if new) and to the classes they teach."""
    person = RosterPerson.objects.filter(
        school_id=school_id, sourced_id=member.sourced_id, user__isnull=False
    ).first()
    if person is not None and not staff_accounts().filter(pk=person.user_id).exists():
        # Closed by staff since the preview: the roster never links a closed account.
        logger.info("Roster teacher %s: the linked account is closed", member.sourced_id)
        return
    user = person.user if person is not None else _account_matched(member)
    if user is None and member.user_id is not None:
        # The matched account was closed (or became a learner's) since the preview: nothing
        # is linked; the next sync plans what the portal then holds, for an admin to read.
        logger.info("Roster teacher %s: the matched account is gone", member.sourced_id)
        return
    if user is None:
        # Ready for single sign-on by email: no usable password, a teacher's role only.
        user = staff_add(
            username=_free_username(member), email=member.email, role=StaffRole.TEACHER,
            password=None, first_name=member.first_name, last_name=member.last_name,
            school_ids=[school_id], added_by=actor, address=address,
        )  # fmt: skip
    elif member.role_added:
        _teacher_role_add(school_id, user, actor=actor, address=address)
    _person_link(school_id, member.sourced_id, user=user, last_modified=member.last_modified)
    _teaching_set(school_id, user, member, groups, actor=actor, address=address)


def _account_matched(member: StaffMember):
    """Return the account the plan matched, if it is still an active staff account.

    A teacher planned as new (user_id None) is never matched again here: the preview said a
    new account, and a deactivated account of the same email must stay closed.
    """
    if member.user_id is None:
        return None
    return staff_accounts().filter(pk=member.user_id).first()


def _teacher_role_add(
    school_id: int, user, *, actor: AbstractBaseUser | None, address: str | None
) -> None:
    """Give a matched account of another school the teacher role here, if it has none yet."""
    if user.is_superuser or StaffProfile.objects.filter(user=user, role__in=TRUST_ROLES).exists():
        return  # a trust role sees every school already
    if SchoolRole.objects.filter(user=user, school_id=school_id).exists():
        return  # a role it holds here (an admin stays admin) is never changed
    staff_role_set(user=user, role=StaffRole.TEACHER, school_id=school_id)
    audit_record(
        actor=actor,
        address=address,
        action=AuditEvent.Action.STAFF_CHANGED,
        account=user.get_username(),
        role=StaffRole.TEACHER,
        school=School.objects.get(pk=school_id).code,
        source="roster",
    )


def _free_username(member: StaffMember) -> str:
    """Return the plan's username, else (taken since) its email's, numbered as the planner does."""
    planned = username_normal_form(member.username)[:USERNAME_MAX_LENGTH]
    if planned and not User.objects.filter(username__iexact=planned).exists():
        return planned
    base = username_normal_form(member.email.rpartition("@")[0])[: USERNAME_MAX_LENGTH - 4]
    base = base or planned[: USERNAME_MAX_LENGTH - 4] or "staff"
    number = 2
    while User.objects.filter(username__iexact=f"{base}{number}").exists():
        number += 1
    return f"{base}{number}"


def _teaching_set(
    school_id: int,
    user,
    member: StaffMember,
    groups: dict[str, int],
    *,
    actor: AbstractBaseUser | None,
    address: str | None,
) -> None:
    """Link the teacher to the roster's classes they teach, unlink those they no longer do.

    Links staff made by hand (to a group the roster did not make) and last year's archived
    classes stay as they are.
    """
    roster_groups = set(
        RosterClass.objects.filter(
            school_id=school_id, group__archived_at__isnull=True
        ).values_list("group_id", flat=True)
    )
    wanted = {groups[c] for c in member.class_ids if c in groups} & roster_groups
    links = GroupStaff.objects.filter(user=user, group_id__in=roster_groups)
    current = set(links.values_list("group_id", flat=True))
    if wanted == current:
        return
    links.filter(group_id__in=current - wanted).delete()
    GroupStaff.objects.bulk_create(
        [GroupStaff(group_id=pk, user=user) for pk in sorted(wanted - current)]
    )
    audit_record(
        actor=actor,
        address=address,
        action=AuditEvent.Action.STAFF_CHANGED,
        account=user.get_username(),
        groups=sorted(SchoolGroup.objects.filter(pk__in=wanted).values_list("name", flat=True)),
        source="roster",
    )


def _person_link(
    school_id: int,
    sourced_id: str,
    *,
    learner: Learner | None = None,
    user=None,
    grade: str = "",
    last_modified: str = "",
) -> None:
    """Keep which of the portal's learners or accounts the roster's person is."""
    values: dict[str, object] = {}
    if last_modified:
        values["last_modified"] = when(last_modified)
    if grade:
        values["grade"] = grade
    if learner is not None:
        # One roster person per learner: a sourcedId the school changed takes the link over.
        RosterPerson.objects.filter(learner=learner).exclude(
            school_id=school_id, sourced_id=sourced_id
        ).update(learner=None)
        values.update(role=RosterPerson.Role.STUDENT, learner=learner)
    if user is not None:
        values.update(role=RosterPerson.Role.TEACHER, user=user)
    RosterPerson.objects.update_or_create(
        school_id=school_id, sourced_id=sourced_id, defaults=values
    )
