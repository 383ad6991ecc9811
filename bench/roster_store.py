"""The roster bench's database: a plan's outcome put in it in bulk, and the roster cleared.

`plan_store` does what applying a plan leaves (learners, classes, links, members, teachers)
without the upstream, in a few bulk inserts, so that a second sync of 20,000 pupils can be
previewed without registering them. `roster_clear` takes away every roster row and what the
roster made, leaving the schools, on the bench's own database only.
"""

from datetime import date

from django.contrib.auth.models import Group, User
from django.db import transaction

from accounts.access import STAFF_GROUP
from classes.models import GroupMembership, GroupStaff, SchoolGroup
from imports.models import ImportJob
from learners.models import Learner
from roster.joining import when
from roster.models import RosterClass, RosterLock, RosterPerson, RosterSync
from roster.plan import SyncPlan


@transaction.atomic
def plan_store(plan: SyncPlan) -> None:
    """Put what the plan says in the database in bulk: learners, classes, links, members."""
    staff_group = Group.objects.get_or_create(name=STAFF_GROUP)[0]
    for school in plan.schools:
        groups = SchoolGroup.objects.bulk_create(
            SchoolGroup(school_id=school.school_id, name=new.name, kind=new.kind,
                        level=new.level, academic_year=new.academic_year)
            for new in school.new_classes
        )  # fmt: skip
        RosterClass.objects.bulk_create(
            RosterClass(school_id=school.school_id, sourced_id=new.sourced_id, group=group,
                        last_modified=when(new.last_modified))
            for new, group in zip(school.new_classes, groups, strict=True)
        )  # fmt: skip
        group_of = {
            new.sourced_id: group.pk for new, group in zip(school.new_classes, groups, strict=True)
        }
        users = User.objects.bulk_create(User(username=j.username) for j in school.joiners)
        learners = Learner.objects.bulk_create(
            Learner(school_id=school.school_id, user=user, username=j.username,
                    first_name=j.first_name, last_name=j.last_name, email=j.email,
                    dob=date.fromisoformat(j.dob), level=j.level, status=Learner.Status.ACTIVE,
                    upstream_user_id=f"up-{j.sourced_id}")
            for j, user in zip(school.joiners, users, strict=True)
        )  # fmt: skip
        RosterPerson.objects.bulk_create(
            RosterPerson(school_id=school.school_id, sourced_id=j.sourced_id, role="student",
                         learner=learner, grade=j.grade, last_modified=when(j.last_modified))
            for j, learner in zip(school.joiners, learners, strict=True)
        )  # fmt: skip
        GroupMembership.objects.bulk_create(
            GroupMembership(group_id=group_of[sid], learner=learner)
            for j, learner in zip(school.joiners, learners, strict=True)
            for sid in j.class_ids
        )
        teachers = User.objects.bulk_create(
            User(username=m.username, email=m.email, first_name=m.first_name,
                 last_name=m.last_name)
            for m in school.staff
        )  # fmt: skip
        staff_group.user_set.add(*teachers)
        RosterPerson.objects.bulk_create(
            RosterPerson(school_id=school.school_id, sourced_id=m.sourced_id, role="teacher",
                         user=user, last_modified=when(m.last_modified))
            for m, user in zip(school.staff, teachers, strict=True)
        )  # fmt: skip
        GroupStaff.objects.bulk_create(
            GroupStaff(group_id=group_of[sid], user=user)
            for m, user in zip(school.staff, teachers, strict=True)
            for sid in m.class_ids
        )


@transaction.atomic
def roster_clear() -> str:
    """Delete the syncs, the roster's links and what they made; say how much went."""
    people = RosterPerson.objects.all()
    learner_ids = set(people.exclude(learner=None).values_list("learner_id", flat=True))
    # A joiner's learner is made by its import row, before any later sync links it.
    jobs = ImportJob.objects.filter(filename__startswith="roster sync ")
    learner_ids |= set(jobs.exclude(rows__learner=None).values_list("rows__learner_id", flat=True))
    learners = Learner.objects.filter(pk__in=learner_ids)
    user_ids = set(learners.values_list("user_id", flat=True))
    user_ids |= set(people.exclude(user=None).values_list("user_id", flat=True))
    groups = SchoolGroup.objects.filter(roster_class__isnull=False)
    counts = (len(learner_ids), groups.count(), len(user_ids))
    RosterSync.objects.all().delete()
    RosterLock.objects.all().delete()
    people.delete()
    jobs.delete()
    # Members and staff links go with their groups, and with their learners.
    groups.delete()
    learners.delete()
    User.objects.filter(pk__in=user_ids).delete()
    return f"cleared {counts[0]:,} learners, {counts[1]:,} groups, {counts[2]:,} accounts"
