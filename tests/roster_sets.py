"""Roster file sets as the reader leaves them (roster.records), and a plan applied by hand.

`file_set` turns a tests.roster_files.RosterSpec straight into a RosterFileSet (no CSV in
between), numbering users.csv's lines as roster_write writes them: pupils first, then
teachers. `plan_apply` does to the database what a plan says, the simple way, so that a test
can plan the same files again and see nothing left to do.
"""

from __future__ import annotations

from datetime import date, datetime

from django.contrib.auth.models import Group, User
from django.utils import timezone

from accounts.access import STAFF_GROUP
from classes.models import GroupMembership, GroupStaff, SchoolGroup
from learners.models import Learner
from roster.models import RosterClass, RosterPerson
from roster.plan import SyncPlan
from roster.records import (
    AcademicSession,
    Enrolment,
    Org,
    Person,
    RosterFileSet,
)
from roster.records import (
    RosterClass as ClassRecord,
)
from tests.roster_files import RosterSpec


def stamp(text: str) -> datetime | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


def file_set(spec: RosterSpec, *, version: str = "1.1") -> RosterFileSet:
    """Return the RosterFileSet the reader would make of the spec's files."""
    modes = {name: spec.modes.get(name, "bulk") for name in (
        "orgs", "academicSessions", "users", "classes", "courses", "enrollments",
        "demographics")}  # fmt: skip
    files = RosterFileSet(version=version, modes=modes)
    for line, school in enumerate(spec.schools, start=2):
        files.orgs[school.sourced_id] = Org(
            school.sourced_id, "active", school.name, "school", school.code, line=line
        )
    for term in spec.terms:
        files.sessions[term.sourced_id] = AcademicSession(
            term.sourced_id, "active", term.title, "schoolYear", term.start, term.end,
            term.school_year,
        )  # fmt: skip
    line = 1
    for pupil in spec.pupils:
        line += 1
        files.people[pupil.sourced_id] = Person(
            pupil.sourced_id, pupil.status, stamp(pupil.modified), True, "student", pupil.login,
            pupil.given_name, pupil.family_name, pupil.email, pupil.sourced_id, (pupil.school,),
            (pupil.grade,) if pupil.grade else (), pupil.birth_date, line=line,
        )  # fmt: skip
    for teacher in spec.teachers:
        line += 1
        files.people[teacher.sourced_id] = Person(
            teacher.sourced_id, teacher.status, stamp(teacher.modified), True, teacher.role,
            teacher.email, teacher.given_name, teacher.family_name, teacher.email,
            teacher.sourced_id, (teacher.school,), (), line=line,
        )  # fmt: skip
    for klass in spec.classes:
        files.classes[klass.sourced_id] = ClassRecord(
            klass.sourced_id, klass.status, stamp(klass.modified), klass.title, klass.sourced_id,
            klass.class_type, f"course-{klass.sourced_id}", klass.school, (klass.term,),
            klass.grades,
        )  # fmt: skip
    schools = {k.sourced_id: k.school for k in spec.classes}
    for entry in spec.enrolments:
        class_id, person_id, role = entry[:3]
        files.enrolments.append(
            Enrolment(
                f"enr-{class_id}-{person_id}", entry[3] if len(entry) > 3 else "active",
                stamp("2026-09-01T08:00:00Z"), class_id, person_id, schools.get(class_id, ""),
                role, role == "teacher",
            )
        )  # fmt: skip
    for name, mode in modes.items():
        if mode == "absent":
            _drop(files, name)
    return files


def _drop(files: RosterFileSet, name: str) -> None:
    attribute = {
        "orgs": "orgs", "academicSessions": "sessions", "users": "people",
        "classes": "classes", "enrollments": "enrolments",
    }.get(name)  # fmt: skip
    if attribute:
        getattr(files, attribute).clear()


def plan_apply(plan: SyncPlan, files: RosterFileSet | None = None) -> None:
    """Do what the plan says to the database (as roster.applying would, without upstream)."""
    now = timezone.now()
    for school in plan.schools:
        for archived in school.archived:
            SchoolGroup.objects.filter(pk=archived.group_id).update(archived_at=now)
            GroupMembership.objects.filter(group_id=archived.group_id, left_at=None).update(
                left_at=now
            )
        for new in school.new_classes:
            group = SchoolGroup.objects.create(
                school_id=school.school_id, name=new.name, kind=new.kind, level=new.level,
                academic_year=new.academic_year,
            )  # fmt: skip
            RosterClass.objects.update_or_create(
                school_id=school.school_id, sourced_id=new.sourced_id, defaults={"group": group}
            )
        for change in school.class_changes:
            SchoolGroup.objects.filter(pk=change.group_id).update(
                name=change.name, kind=change.kind, level=change.level
            )
        groups = dict(
            RosterClass.objects.filter(school_id=school.school_id).values_list(
                "sourced_id", "group_id"
            )
        )

        for joiner in school.joiners:
            user = User.objects.create_user(joiner.username)
            learner = Learner.objects.create(
                school_id=school.school_id, user=user, username=joiner.username,
                first_name=joiner.first_name, last_name=joiner.last_name, email=joiner.email,
                dob=date.fromisoformat(joiner.dob), level=joiner.level,
                upstream_user_id=f"up-{joiner.sourced_id}", status=Learner.Status.ACTIVE,
            )  # fmt: skip
            RosterPerson.objects.update_or_create(
                school_id=school.school_id, sourced_id=joiner.sourced_id,
                defaults={"role": "student", "learner": learner,
                          "grade": joiner.grade, "import_row": None},
            )  # fmt: skip
            _join(groups, learner.pk, joiner.class_ids)
        for matched in school.matched:
            RosterPerson.objects.update_or_create(
                school_id=school.school_id, sourced_id=matched.sourced_id,
                defaults={"role": "student",
                          "learner_id": matched.learner_id, "grade": matched.grade},
            )  # fmt: skip
            _join(groups, matched.learner_id, matched.class_ids)
        for returner in school.returners:
            Learner.objects.filter(pk=returner.learner_id).update(left_at=None)
            _join(groups, returner.learner_id, returner.class_ids)
        for change in school.changes:
            values = dict(change.details)
            if change.level_to:
                values["level"] = change.level_to
            Learner.objects.filter(pk=change.learner_id).update(**values)
            GroupMembership.objects.filter(
                learner_id=change.learner_id, group_id__in=change.groups_left, left_at=None
            ).update(left_at=now)
            _join(groups, change.learner_id, change.classes_joined)
        for leaver in school.leavers:
            Learner.objects.filter(pk=leaver.learner_id).update(left_at=now)
            GroupMembership.objects.filter(
                learner_id=leaver.learner_id, left_at=None, group__roster_class__isnull=False
            ).update(left_at=now)
        for member in school.staff:
            user_id = member.user_id
            if user_id is None:
                user = User.objects.create_user(
                    member.username, email=member.email, first_name=member.first_name,
                    last_name=member.last_name,
                )  # fmt: skip
                user.groups.add(Group.objects.get_or_create(name=STAFF_GROUP)[0])
                user_id = user.pk
            RosterPerson.objects.update_or_create(
                school_id=school.school_id,
                sourced_id=member.sourced_id,
                defaults={"role": "teacher", "user_id": user_id},
            )
            wanted = {groups[sid] for sid in member.class_ids}
            GroupStaff.objects.filter(user_id=user_id, group__roster_class__isnull=False).exclude(
                group_id__in=wanted
            ).delete()
            for group_id in wanted:
                GroupStaff.objects.get_or_create(user_id=user_id, group_id=group_id)
    if files is not None:
        for person in files.people.values():
            RosterPerson.objects.filter(sourced_id=person.sourced_id).update(
                last_modified=person.date_last_modified
            )
        for klass in files.classes.values():
            RosterClass.objects.filter(sourced_id=klass.sourced_id).update(
                last_modified=klass.date_last_modified
            )


def _join(groups: dict[str, int], learner_id: int, class_ids: list[str]) -> None:
    GroupMembership.objects.bulk_create(
        GroupMembership(group_id=groups[sid], learner_id=learner_id) for sid in class_ids
    )
