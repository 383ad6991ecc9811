"""Roster syncs made directly, with a plan of the plan's own dataclasses, for the pages' tests."""

from django.utils import timezone

from classes.models import SchoolGroup
from imports.models import ImportJob, ImportRow
from imports.passwords import password_encrypt
from learners.models import Level
from roster.models import RosterSync
from roster.plan import (
    Archived,
    Change,
    Joiner,
    Leaver,
    NewClass,
    Returner,
    SchoolPlan,
    StaffMember,
    SyncPlan,
)
from roster.records import Problem
from schools.models import School

HOLD_REASON = "40% of the school's pupils would leave (more than 10%)."


def school_plan(school: School, *, joiners: int = 3, leavers: int = 2, tag: str = "") -> SchoolPlan:
    """Return a school's plan with a few of every list, names carrying `tag`."""
    return SchoolPlan(
        school_id=school.pk,
        code=school.code,
        name=school.name,
        learners_before=5,
        joiners=[
            Joiner(
                sourced_id=f"s-{tag}{n}",
                username=f"joiner{tag}{n}",
                first_name=f"Jo{tag}",
                last_name=f"Joiner{n}",
                email="",
                dob="2014-03-0" + str(1 + n % 9),
                level=Level.SECONDARY,
                grade="07",
                class_ids=["c-7a"],
                made_password=True,
            )
            for n in range(joiners)
        ],
        returners=[
            Returner(sourced_id="s-back", learner_id=1, name=f"Ruby Returner{tag}", class_ids=[])
        ],
        leavers=[
            Leaver(learner_id=n, name=f"Leo Leaver{tag}{n}", sourced_id=f"s-l{n}")
            for n in range(leavers)
        ],
        changes=[
            Change(
                learner_id=9,
                sourced_id="s-c",
                name=f"Cara Changer{tag}",
                details={"last_name": "Changer"},
                level_from=Level.PRIMARY,
                level_to=Level.SECONDARY,
                classes_joined=["c-7a"],
            )
        ],
        new_classes=[
            NewClass(
                sourced_id="c-7a",
                name=f"7A{tag}",
                kind=SchoolGroup.Kind.TEACHING_CLASS,
                level=Level.SECONDARY,
                academic_year="2026/27",
            )
        ],
        archived=[Archived(group_id=1, name=f"6Z{tag}", academic_year="2025/26")],
        staff=[
            StaffMember(
                sourced_id="t-1",
                user_id=None,
                username="tess.teacher",
                email="tess@school.example",
                first_name="Tess",
                last_name=f"Teacher{tag}",
                class_ids=["c-7a"],
            )
        ],
        hold_reasons=[HOLD_REASON],
    )


def make_sync(
    *,
    state: str = RosterSync.State.HELD,
    school: School | None = None,
    schools: list[School] | None = None,
    filename: str = "oneroster-export.zip",
    problems: int = 2,
    joiners: int = 3,
    tag: str = "",
) -> RosterSync:
    """Create a sync of the given state whose plan covers `schools` (else the default school)."""
    covered = schools or [school or School.default()]
    plan = SyncPlan(
        schools=[school_plan(s, joiners=joiners, tag=tag) for s in covered],
        problems=[
            Problem(file="users.csv", line=n + 2, reason=f"The birthDate is missing{tag}.")
            for n in range(problems)
        ],
    )
    held = state == RosterSync.State.HELD
    sync = RosterSync.objects.create(
        school=school,
        origin=RosterSync.Origin.UPLOAD,
        filename=filename,
        state=state,
        version="1.2",
        plan=plan.to_json(),
        hold_reasons=[HOLD_REASON] if held else [],
        joined=plan.joined,
        left=plan.left,
        changed=plan.changed,
        problems=len(plan.problems),
        school_figures=plan.school_figures(),
    )
    sync.schools.set(covered)  # as planning does
    return sync


def registered_with_slips(
    sync: RosterSync,
    groups: list[SchoolGroup],
    pupils: int = 2,
    password: str = "Slip-pass-123",
    *,
    linked: bool = True,
    filename: str = "",
) -> ImportJob:
    """Give the sync a finished registration whose pupils wait for their slips in `groups`.

    `linked=False`: a registration of the same school that is not the sync's (a hand-uploaded
    file, maybe named like the sync's jobs).
    """
    now = timezone.now()
    job = ImportJob.objects.create(
        filename=filename or sync.filename,
        state=ImportJob.State.FINISHED,
        created_at=now,
        finished_at=now,
        generated_passwords=pupils,
        total_rows=pupils,
        valid_rows=pupils,
        school=groups[0].school,
    )
    for number in range(pupils):
        ImportRow.objects.create(
            job=job,
            row_number=number + 2,
            username=f"slip.pupil{number}",
            first_name="Sid",
            last_name=f"Slip{number}",
            school=groups[0].school,
            group_ids=[group.pk for group in groups],
            password_encrypted=password_encrypt(f"{password}{number}"),
            password_generated=True,
            state=ImportRow.State.REGISTERED,
        )
    if linked:
        sync.import_jobs.add(job)
    return job
