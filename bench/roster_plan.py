"""How long planning a trust's roster takes, and how much memory: a first sync and a second.

The roster is tests.roster_files.trust_spec() (20 schools, 20,000 pupils, 1,200 classes,
60,000 enrolments), read as the reader leaves it (tests.roster_sets.file_set). First it is
planned against a database without it, then the plan is put in the database in bulk (as
applying would leave it, without the upstream), and planned again. Memory is this process's
RSS, sampled every 5 ms: the growth while planning. Run it on a database of its own:

    DATABASE_URL=sqlite:////tmp/roster-bench.sqlite3 .venv/bin/python -m bench.roster_plan
"""

import os
import resource
import threading
import time
from datetime import date

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
django.setup()

from django.contrib.auth.models import Group, User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402

from accounts.access import STAFF_GROUP  # noqa: E402
from classes.models import GroupMembership, GroupStaff, SchoolGroup  # noqa: E402
from learners.models import Learner  # noqa: E402
from roster.models import RosterClass, RosterPerson  # noqa: E402
from roster.plan import SyncPlan  # noqa: E402
from roster.planning import plan_sync  # noqa: E402
from schools.models import School  # noqa: E402
from tests.roster_files import trust_spec  # noqa: E402
from tests.roster_sets import file_set  # noqa: E402

TODAY = date(2026, 10, 1)
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE


def measured(files) -> tuple[SyncPlan, float, int]:
    """Return the plan, the seconds it took and the RSS growth while planning (bytes)."""
    start_rss, peak, done = rss(), [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss())
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    plan = plan_sync(files, today=TODAY)
    took = time.perf_counter() - started
    done.set()
    sampler.join()
    return plan, took, max(peak[0], rss()) - start_rss


@transaction.atomic
def stored(plan: SyncPlan) -> None:
    """Put what the plan says in the database in bulk: learners, classes, links, members."""
    staff_group = Group.objects.get_or_create(name=STAFF_GROUP)[0]
    for school in plan.schools:
        groups = SchoolGroup.objects.bulk_create(
            SchoolGroup(school_id=school.school_id, name=new.name, kind=new.kind,
                        level=new.level, academic_year=new.academic_year)
            for new in school.new_classes
        )  # fmt: skip
        RosterClass.objects.bulk_create(
            RosterClass(school_id=school.school_id, sourced_id=new.sourced_id, group=group)
            for new, group in zip(school.new_classes, groups, strict=True)
        )
        group_of = {
            new.sourced_id: group.pk for new, group in zip(school.new_classes, groups, strict=True)
        }
        users = User.objects.bulk_create(User(username=j.username) for j in school.joiners)
        learners = Learner.objects.bulk_create(
            Learner(school_id=school.school_id, user=user, username=j.username,
                    first_name=j.first_name, last_name=j.last_name, email=j.email,
                    dob=date.fromisoformat(j.dob), level=j.level, status="active",
                    upstream_user_id=f"up-{j.sourced_id}")
            for j, user in zip(school.joiners, users, strict=True)
        )  # fmt: skip
        RosterPerson.objects.bulk_create(
            RosterPerson(school_id=school.school_id, sourced_id=j.sourced_id, role="student",
                         learner=learner, grade=j.grade)
            for j, learner in zip(school.joiners, learners, strict=True)
        )  # fmt: skip
        GroupMembership.objects.bulk_create(
            GroupMembership(group_id=group_of[sid], learner=learner)
            for j, learner in zip(school.joiners, learners, strict=True)
            for sid in j.class_ids
        )
        teachers = User.objects.bulk_create(
            User(username=m.username, email=m.email) for m in school.staff
        )
        staff_group.user_set.add(*teachers)
        RosterPerson.objects.bulk_create(
            RosterPerson(school_id=school.school_id, sourced_id=m.sourced_id, role="teacher",
                         user=user)
            for m, user in zip(school.staff, teachers, strict=True)
        )  # fmt: skip
        GroupStaff.objects.bulk_create(
            GroupStaff(group_id=group_of[sid], user=user)
            for m, user in zip(school.staff, teachers, strict=True)
            for sid in m.class_ids
        )


def main() -> None:
    call_command("migrate", verbosity=0)
    spec = trust_spec()
    for school in spec.schools:
        School.objects.get_or_create(code=school.code, defaults={"name": school.name})
    files = file_set(spec)
    print(f"{len(spec.pupils)} pupils, {len(spec.classes)} classes, "
          f"{len(files.enrolments)} enrolments")  # fmt: skip
    if RosterPerson.objects.exists():
        print("the database holds a roster already: planning the second sync only")
    else:
        plan, took, grew = measured(files)
        print(f"first sync: {took:.1f} s, +{grew / 2**20:.0f} MB RSS; {plan.joined} joining, "
              f"{sum(len(s.new_classes) for s in plan.schools)} new classes, "
              f"{len(plan.problems)} problems")  # fmt: skip
        started = time.perf_counter()
        stored(plan)
        print(f"(stored in {time.perf_counter() - started:.0f} s)")
    plan, took, grew = measured(files)
    print(
        f"second sync: {took:.1f} s, +{grew / 2**20:.0f} MB RSS; {plan.joined} joining, "
        f"{plan.changed} changed, {plan.left} leaving, {len(plan.problems)} problems"
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"the process's peak RSS, the files' records included: {peak:.0f} MB")


if __name__ == "__main__":
    main()
