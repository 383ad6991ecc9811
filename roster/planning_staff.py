"""The staff part of a plan: teachers linked, matched by email, or given new accounts.

roster.planning states the rules; this works them out for one school.
"""

from __future__ import annotations

from collections import defaultdict

from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from accounts.usernames import USERNAME_MAX_LENGTH, username_normal_form
from roster.plan import StaffMember
from roster.planning_classes import ClassPlanner, stamp
from roster.planning_state import PortalState, usernames_taken
from roster.records import ACTIVE, BULK, DELTA, Enrolment, Person, Problem, RosterFileSet

TEACHER = "teacher"


def staff_plan(
    files: RosterFileSet,
    state: PortalState,
    classes: ClassPlanner,
    teachers: list[Person],
    enrolments: list[Enrolment],
    problems: list[Problem],
) -> list[StaffMember]:
    """Return the school's teachers who are new, newly linked, or whose classes change."""
    joins: dict[str, set[str]] = defaultdict(set)
    ends: dict[str, set[str]] = defaultdict(set)
    for row in enrolments:
        if row.role == TEACHER:
            (joins if row.status == ACTIVE else ends)[row.person_id].add(row.class_id)
    group_sid = state.group_sourced_ids()
    known = classes.known()
    mode = files.mode("enrollments")
    members = []
    for person in sorted(teachers, key=lambda p: p.sourced_id):
        if person.status != ACTIVE or not person.enabled:
            continue  # a teacher who leaves keeps their account: staff close it in the portal
        link = state.links.get((classes.school_id, person.sourced_id))
        user_id = link.user_id if link and link.role == TEACHER else None
        if user_id is not None and user_id not in state.active_staff:
            # Staff closed the account (or it is no longer staff): the roster never reopens it.
            reason = (
                "The teacher's account in the portal is closed, so the roster links them to no "
                "class; reopen it on the staff pages if they still teach here."
            )
            problems.append(_problem(person, reason))
            continue
        email = person.email.strip()
        if user_id is None and email:
            try:
                validate_email(email)
            except ValidationError:
                problems.append(_problem(person, f"email: {email} is not an email address."))
                continue
            found = state.staff_by_email.get(email.casefold(), [])
            if len(found) > 1:
                reason = (
                    f"email: {len(found)} staff accounts have the address {email}; "
                    "keep it on one of them."
                )
                problems.append(_problem(person, reason))
                continue
            user_id = found[0] if found else None
        elif user_id is None:
            reason = (
                "email: the teacher has no email address, which their account and single "
                "sign-on need."
            )
            problems.append(_problem(person, reason))
            continue
        teaching = state.teaching.get(user_id, ()) if user_id else ()
        current = {group_sid[g] for g in teaching if g not in classes.archived}
        if mode == BULK:
            wanted = joins.get(person.sourced_id, set())
        elif mode == DELTA:
            wanted = (current - ends.get(person.sourced_id, set())) | joins.get(
                person.sourced_id, set()
            )
        else:
            wanted = current
        wanted &= known
        if user_id is not None and link is not None and wanted == current:
            continue
        # Only an account newly matched by email is given the teacher role: a linked teacher
        # whose role here staff took away keeps it taken away.
        role_added = (
            user_id is not None and link is None and not state.has_role(user_id, classes.school_id)
        )
        members.append(
            StaffMember(
                person.sourced_id, user_id, "", email, person.given_name.strip(),
                person.family_name.strip(), sorted(wanted), stamp(person.date_last_modified),
                role_added=role_added,
            )
        )  # fmt: skip
    return members


def usernames_give(members: list[StaffMember], people: dict[str, Person], taken: set[str]) -> None:
    """Give each new account a username: its email's local part, made unique by a number.

    `taken` holds the usernames the plan gives already (its pupils'); accounts' are read.
    """
    new = sorted((m for m in members if m.user_id is None), key=lambda m: m.sourced_id)
    bases = {}
    for member in new:
        person = people[member.sourced_id]
        for raw in (member.email.rpartition("@")[0], person.username):
            base = username_normal_form(raw)[: USERNAME_MAX_LENGTH - 4]
            try:
                UnicodeUsernameValidator()(base)
            except ValidationError:
                continue
            if base:
                bases[member.sourced_id] = base
                break
        bases.setdefault(member.sourced_id, "staff")  # an address of symbols only
    number = dict.fromkeys(bases, 1)
    waiting = list(new)
    while waiting:
        wanted = {
            m.sourced_id: _numbered(bases[m.sourced_id], number[m.sourced_id]) for m in waiting
        }
        used = usernames_taken(wanted.values()) | taken
        left = []
        for member in waiting:
            username = wanted[member.sourced_id]
            if username in used:
                number[member.sourced_id] += 1
                left.append(member)
            else:
                member.username = username
                used.add(username)
                taken.add(username)
        waiting = left


def _numbered(base: str, number: int) -> str:
    return base if number == 1 else f"{base}{number}"


def _problem(person: Person, reason: str) -> Problem:
    return Problem("users.csv", person.line, reason, person.sourced_id)
