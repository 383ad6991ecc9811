"""A sync's plan: what a roster's files would change, worked out before anything changes.

`plan_sync` reads the portal (a few set-wise queries, roster.planning_state) and writes
nothing. The rules, school by school:

- Schools. Each org is a portal `School` by code: its `identifier`, else its sourcedId, ignoring
  case. An org matching none is one problem (its people and classes are skipped); a sync for one
  school ignores the other orgs without a word.
- Pupils (role student, active, enabled). Their level comes from their grades by the school's
  table (roster.grades); a pupil with no level, no birth date, or a username, name or email the
  single registration form refuses is a problem of users.csv, with its line and reason.
- Links. A pupil linked (RosterPerson) to a learner: their name, email and date of birth
  (never the username), level and roster classes are compared, and what differs is a Change;
  a linked learner who had left comes back (a Returner, the same learner). A link whose
  registration is still queued or being sent plans nothing; one registered is that learner;
  one that failed is a Joiner again, so a sync cut short by an outage resumes and each pupil
  is registered exactly once. A pupil not linked whose username (normal form) and date of
  birth are an active learner's of the same school is Matched to them; a username held by any
  other account is a problem. Anyone else is a Joiner, with a made password unless the school
  says otherwise (or primary pupils sign in only by card).
- Moves. SourcedIds are each school's: a school outside the files has ids of its own. Within
  the files (one upstream) a sourcedId is one person, so a pupil linked to a learner of one of
  the files' schools (also one a `--school` sync leaves out) and in another's users.csv is
  moving school. The portal cannot move a learner between schools yet: the pupil is a problem
  and the school they move to is held, its reason naming them and both schools; an admin moves
  them by hand (then they are matched by username) or discards the sync.
- Leavers. With users.csv bulk, every current roster pupil of the school missing from it, or
  there as tobedeleted or disabled, leaves; with a delta only those rows leave; without users.csv
  nobody does. A learner registered by hand (no link) never leaves by the roster. A row the
  reader could not use keeps its pupil; a bulk users.csv with a row whose sourcedId is unknown
  (blank, or the line unreadable) makes nobody leave and holds the sync.
- Delta. A delta row no newer than what was applied (`last_modified`, kept for every person
  applied, a leaver's too) changes nothing: a late, older delta never undoes a newer one. Bulk
  enrollments.csv is the whole truth of the roster classes of the pupils it covers; a delta's
  active rows join and tobedeleted rows leave. Only groups the roster made (RosterClass) are
  managed: groups staff made by hand are never touched. The same files planned again once
  applied give an empty plan.
- Classes. Each active class of classes.csv is a NewClass or, if its group's name, kind or level
  differ, a ClassChange; homeroom is a tutor group, scheduled a teaching class; its level comes
  from its grades, else its pupils' most common level; its academic year from its term's
  schoolYear. A name another group of that school and year has gets the class's sourcedId after
  it (also when applying, for a group made since the preview): a group staff made by hand is
  never taken over. OneRoster has no year groups: one per grade and academic year is made from
  the pupils' grades ("Year 7", "Reception", else "Grade X") and each pupil joins theirs.
- September. When the files' academic year (the latest of their active classes, else of their
  sessions) is later than that of the school's roster groups, every roster group of an earlier
  year is archived, the new year's classes and year groups are made, pupils move, and a pupil
  whose level changes shows it. Such a sync is always held for an admin to read first.
- Staff. Teachers (1.2: primary role teacher) are linked, else matched by email to exactly one
  active staff account, else given a new account (username from their email), and put with
  the classes they teach. A matched account with no role in the school (a teacher of another
  school of the trust) is given the teacher role there ("teacher role added"); a role it
  holds is never changed. The roster never makes administrators or any other role: admin,
  safeguarding and head-of-year roles are given in the portal only. Only teachers who are
  new, newly linked or whose classes change are listed.
- Holds. A school's part is held when more than ROSTER_HOLD_LEAVERS_PERCENT of its current
  roster pupils would leave, or more than ROSTER_HOLD_CHANGES_PERCENT of their roster
  enrolments would change (a school's first sync never is, for its size); the whole sync is
  held when a file is empty or cut off.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from datetime import date

from django.conf import settings
from django.utils import timezone
from django.utils.translation import ngettext

from accounts.usernames import username_normal_form
from roster.grades import grade_table_parse
from roster.plan import SchoolPlan, SyncPlan
from roster.planning_classes import ClassPlanner
from roster.planning_people import PupilPlanner
from roster.planning_staff import TEACHER, staff_plan, usernames_give
from roster.planning_state import PortalState, accounts_by_username, portal_state_load
from roster.records import ACTIVE, BULK, Enrolment, Person, Problem, RosterClass, RosterFileSet
from schools.models import School

STUDENT = "student"


def plan_sync(
    files: RosterFileSet, *, school: School | None = None, today: date | None = None
) -> SyncPlan:
    """Return what applying the files would change, school by school; change nothing."""
    today = today or timezone.localdate()
    problems: list[Problem] = []
    orgs = _orgs_matched(files, school, problems)
    schools = {found.pk: found for found in orgs.values()}
    others = {} if school is None else _schools_left_out(files, school)
    pupils = (p.sourced_id for p in files.people.values() if p.role == STUDENT)
    state = portal_state_load(sorted(schools), others=others, pupils=pupils)
    state.file_schools = {**others, **{pk: found.name for pk, found in schools.items()}}
    people, classes, enrolments = _by_school(files, orgs, state)
    unlinked = (
        username_normal_form(person.username)
        for school_id, found in people.items()
        for person in found
        if person.role == STUDENT and (school_id, person.sourced_id) not in state.links
    )
    accounts = accounts_by_username(unlinked)
    present = {p.sourced_id for p in files.people.values() if p.status == ACTIVE and p.enabled}
    # A row the reader could not use is no sign its pupil left: a typo must never make a leaver.
    present |= {p.sourced_id for p in files.problems if p.file == "users.csv" and p.sourced_id}
    # A row whose id could not be read may be anyone's: nobody can be known to have left.
    unread = _rows_unread(files)
    usernames: dict[str, int] = {}
    plans, staff = [], []
    for found in sorted(schools.values(), key=lambda s: (s.name, s.code)):
        plan = SchoolPlan(found.pk, found.code, found.name)
        first_problem = len(problems)
        school_settings = state.settings[found.pk]
        table, _unread = grade_table_parse(school_settings.roster_grade_levels)
        further = school_settings.roster_further_education
        planner = ClassPlanner(found.pk, files, state, table, further, classes[found.pk], today)
        pupils = [p for p in people[found.pk] if p.role == STUDENT]
        pupils_planner = PupilPlanner(
            files, state, school_settings, table, planner, plan, accounts, usernames, present,
            problems, leavers_counted=not unread,
        )  # fmt: skip
        pupils_planner.run(pupils, enrolments[found.pk])
        planner.plan(plan, pupils_planner.levels)
        teachers = [p for p in people[found.pk] if p.role == TEACHER]
        plan.staff = staff_plan(files, state, planner, teachers, enrolments[found.pk], problems)
        staff.extend(plan.staff)
        plan.hold_reasons += _school_holds(plan, planner)
        plans.append(plan)
        # Its rows' problems are its admins' to read (sourcedIds are unique per school only).
        problems[first_problem:] = [
            replace(problem, school_id=found.pk) for problem in problems[first_problem:]
        ]
    usernames_give(staff, files.people, set(usernames))
    return SyncPlan(
        schools=plans,
        problems=[*files.problems, *problems],
        hold_reasons=_file_holds(files, unread),
    )


def _orgs_matched(
    files: RosterFileSet, only: School | None, problems: list[Problem]
) -> dict[str, School]:
    """Return the portal school of each org the sync covers; an org matching none is a problem."""
    by_code = {found.code.casefold(): found for found in School.objects.all()}
    referenced = {klass.org_id for klass in files.classes.values()}
    for person in files.people.values():
        if person.role in (STUDENT, TEACHER):
            referenced.update(person.org_ids)
    matched = {}
    for org in sorted(files.orgs.values(), key=lambda org: (org.line, org.sourced_id)):
        if org.status != ACTIVE:
            continue
        code = org.identifier.strip() or org.sourced_id
        found = by_code.get(code.casefold()) or by_code.get(org.sourced_id.casefold())
        if only is not None:
            if found is not None and found.pk == only.pk:
                matched[org.sourced_id] = found
        elif found is not None:
            matched[org.sourced_id] = found
        elif org.type == "school" or org.sourced_id in referenced:
            reason = (
                f"No school has the code {code} in the portal; add it with `manage.py add_school`."
            )
            problems.append(Problem("orgs.csv", org.line, reason, org.sourced_id))
    # A delta without orgs.csv: an org's sourcedId may be the school's code.
    for org_id in referenced - set(files.orgs):
        found = by_code.get(org_id.casefold())
        if found is not None and (only is None or found.pk == only.pk):
            matched[org_id] = found
    return matched


def _schools_left_out(files: RosterFileSet, only: School) -> dict[int, str]:
    """Return the portal schools (id -> name) of the files' orgs a one-school sync leaves out."""
    by_code = {found.code.casefold(): found for found in School.objects.exclude(pk=only.pk)}
    left_out = {}
    for org in files.orgs.values():
        code = org.identifier.strip() or org.sourced_id
        found = by_code.get(code.casefold()) or by_code.get(org.sourced_id.casefold())
        if found is not None:
            left_out[found.pk] = found.name
    return left_out


def _by_school(
    files: RosterFileSet, orgs: dict[str, School], state: PortalState
) -> tuple[dict[int, list[Person]], dict[int, list[RosterClass]], dict[int, list[Enrolment]]]:
    """Return the files' people, classes and enrolments by the school they belong to."""
    people, classes, enrolments = defaultdict(list), defaultdict(list), defaultdict(list)
    for person in files.people.values():
        found = next((orgs[org] for org in person.org_ids if org in orgs), None)
        if found is not None:
            people[found.pk].append(person)
    class_school = {}
    school_ids = sorted({found.pk for found in orgs.values()})
    for klass in files.classes.values():
        if klass.org_id in orgs:
            class_school[klass.sourced_id] = orgs[klass.org_id].pk
            classes[orgs[klass.org_id].pk].append(klass)
    for row in files.enrolments:
        school_id = class_school.get(row.class_id)
        if school_id is None and row.class_id not in files.classes:
            # A class of an earlier file: the roster group of that id in one of the schools.
            school_id = next((pk for pk in school_ids if (pk, row.class_id) in state.groups), None)
        if school_id is not None:
            enrolments[school_id].append(row)
    return people, classes, enrolments


def _school_holds(plan: SchoolPlan, planner: ClassPlanner) -> list[str]:
    """Return why a school's part waits for an admin, in sentences (empty: it need not)."""
    reasons = []
    if plan.new_academic_year:
        reasons.append(
            f"A new academic year ({plan.new_academic_year}) starts: last year's classes are "
            "archived and this year's made; check the preview."
        )
    if planner.existing_year and planner.year < planner.existing_year:
        reasons.append(
            f"The files are for {planner.year}, before this school's classes "
            f"({planner.existing_year}); check they are the latest export."
        )
    limit = settings.ROSTER_HOLD_LEAVERS_PERCENT
    if plan.learners_before and plan.left * 100 / plan.learners_before > limit:
        reasons.append(
            f"{plan.left} of the school's {plan.learners_before} pupils would leave "
            f"({plan.left * 100 / plan.learners_before:.0f}%), more than the {limit:g}% a "
            "sync applies without an admin."
        )
    limit = settings.ROSTER_HOLD_CHANGES_PERCENT
    if plan.enrolments_before and plan.enrolments_changed * 100 / plan.enrolments_before > limit:
        reasons.append(
            f"{plan.enrolments_changed} of the school's {plan.enrolments_before} class places "
            f"would change ({plan.enrolments_changed * 100 / plan.enrolments_before:.0f}%), "
            f"more than the {limit:g}% a sync applies without an admin."
        )
    return reasons


def _rows_unread(files: RosterFileSet) -> int:
    """Return how many rows of a bulk users.csv could not be read, their sourcedId unknown."""
    if files.mode("users") != BULK:
        return 0  # a delta's missing rows make nobody leave
    return sum(
        1
        for problem in files.problems
        if problem.file == "users.csv" and problem.line > 1 and not problem.sourced_id
    )


def _file_holds(files: RosterFileSet, unread: int) -> list[str]:
    """Return why the whole sync waits: a file empty or cut off, users.csv rows unread."""

    def named(name: str) -> str:
        return name if name.endswith(".csv") else f"{name}.csv"

    reasons = [
        f"{named(name)} has no rows although the manifest gives it whole (bulk): applied, "
        "it would say everyone left; check the export."
        for name in files.empty_files
    ]
    reasons += [
        f"{named(name)} is cut off at its end (its last line is incomplete); export the "
        "files again."
        for name in files.truncated_files
    ]
    if unread:
        reasons.append(
            ngettext(
                "users.csv has %(count)s row that could not be read, so nobody is counted as "
                "leaving; correct the file.",
                "users.csv has %(count)s rows that could not be read, so nobody is counted as "
                "leaving; correct the file.",
                unread,
            )
            % {"count": unread}
        )
    return reasons
