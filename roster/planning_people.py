"""The pupils' part of a plan: joiners, returners, matched, changes and leavers of one school.

roster.planning states the rules; this works them out, pupil by pupil, from what was read.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError

from accounts.usernames import username_normal_form
from imports.models import ImportRow
from learners.forms import username_in_normal_form
from learners.models import Learner
from partner_api.levels import Level
from roster.plan import YEAR_GROUP_PREFIX, Change, Joiner, Leaver, Matched, Returner, SchoolPlan
from roster.planning_checks import Checked, field_problem, pupil_checked
from roster.planning_classes import ClassPlanner, not_newer, stamp
from roster.planning_state import AccountNow, LearnerNow, PortalState
from roster.records import ABSENT, ACTIVE, BULK, DELTA, Enrolment, Person, Problem, RosterFileSet
from schools.models import PartnerSettings

PENDING = (ImportRow.State.QUEUED, ImportRow.State.SENDING)


@dataclass
class PupilPlanner:
    """Plan one school's pupils; `usernames` is shared by every school of the sync."""

    files: RosterFileSet
    state: PortalState
    settings: PartnerSettings
    table: dict[str, str]
    classes: ClassPlanner
    plan: SchoolPlan
    accounts: dict[str, AccountNow]
    usernames: dict[str, int]  # normal form -> users.csv line of the joiner that has it
    present: set[str]  # every active, enabled person of users.csv (any school)
    problems: list[Problem]
    # False when users.csv has rows whose id is unknown: any of them may be a "leaver".
    leavers_counted: bool = True
    levels: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    planned: set[str] = field(default_factory=set)
    leaving: set[str] = field(default_factory=set)

    def run(self, pupils: list[Person], enrolments: list[Enrolment]) -> None:
        """Add the school's pupils to its plan (classes' levels are gathered in `levels`)."""
        school_id = self.plan.school_id
        self.group_sid = self.state.group_sourced_ids()
        self.known = self.classes.known()
        self.joins: dict[str, set[str]] = defaultdict(set)
        self.ends: dict[str, set[str]] = defaultdict(set)
        for row in enrolments:
            if row.role == "student":
                (self.joins if row.status == ACTIVE else self.ends)[row.person_id].add(row.class_id)
        mine = [
            link
            for link in self.state.links.values()
            if link.school_id == school_id and link.role == "student"
        ]
        before = [self.state.learners[link.learner_id] for link in mine if link.learner_id]
        before = [learner for learner in before if learner.current]
        self.plan.learners_before = len(before)
        self.plan.enrolments_before = sum(len(self.state.members.get(x.id, ())) for x in before)
        for person in sorted(pupils, key=lambda p: (p.line, p.sourced_id)):
            self._row(person)
        if self.files.mode("enrollments") != ABSENT:
            for sourced_id in sorted((set(self.joins) | set(self.ends)) - self.planned):
                self._enrolments_only(sourced_id)
        if self.files.mode("users") == BULK:
            for link in sorted(mine, key=lambda link: link.sourced_id):
                learner = self.state.learners.get(link.learner_id)
                if learner and learner.current and link.sourced_id not in self.present:
                    self._leave(learner, link.sourced_id, "")  # no row, so no date

    def _row(self, person: Person) -> None:
        link = self.state.links.get((self.plan.school_id, person.sourced_id))
        if link is None and self._moving(person):
            return
        if (
            link
            and self.files.mode("users") == DELTA
            and not_newer(person.date_last_modified, link.last_modified)
        ):
            return
        learner = self.state.learners.get(link.learner_id) if link and link.learner_id else None
        if person.status != ACTIVE or not person.enabled:
            if learner and learner.current:
                self._leave(learner, person.sourced_id, stamp(person.date_last_modified))
            return
        self.planned.add(person.sourced_id)
        if link and not link.learner_id and link.import_state in PENDING:
            return  # being registered: the run under way finishes it
        if link and not link.learner_id and link.import_state == ImportRow.State.REGISTERED:
            learner = self.state.learners.get(link.import_learner_id)
            if learner is not None and learner.status == Learner.Status.ACTIVE:
                return self._plan_matched(person, learner)
        if learner is not None:
            if learner.status != Learner.Status.ACTIVE:
                return  # erased: nothing to plan
            return self._plan_linked(person, learner)
        if link is None:
            account = self.accounts.get(self._normal(person))
            if account is not None:
                return self._plan_taken(person, account)
        self._plan_joiner(person)

    def _moving(self, person: Person) -> bool:
        """Hold a pupil the files move from another of their schools: a problem, not a joiner.

        The upstream has one learner per person and a learner belongs to one school, which
        the portal cannot change yet: an admin moves them by hand or discards the sync.
        """
        here = self.plan.school_id
        for school_id, school_name in sorted(self.state.file_schools.items()):
            link = self.state.links.get((school_id, person.sourced_id))
            if school_id == here or link is None or link.role != "student":
                continue
            registered = link.import_state == ImportRow.State.REGISTERED
            learner_id = link.learner_id or (link.import_learner_id if registered else None)
            learner = self.state.learners.get(learner_id) if learner_id else None
            if learner is None and link.import_state not in PENDING:
                continue  # never registered there: a joiner here
            if learner is not None and (
                learner.status != Learner.Status.ACTIVE or learner.school_id == here
            ):
                continue  # erased, or moved by hand already (matched here by username)
            name = learner.name if learner else f"{person.given_name} {person.family_name}"
            self._problem(
                person,
                f"This pupil is a learner of {school_name} in the portal, which cannot move a "
                "learner between schools yet.",
            )
            self.plan.hold_reasons.append(
                f"{name.strip()} moves from {school_name} to {self.plan.name}: the portal cannot "
                "move a learner between schools yet; move them by hand, or discard this sync."
            )
            return True
        return False

    def _plan_joiner(self, person: Person) -> None:
        checked = pupil_checked(person, self.table, self.settings)
        username = ""
        try:
            username = username_in_normal_form(person.username)
        except ValidationError as error:
            checked.problems.append(field_problem("username", error))
        if not person.username.strip():
            checked.problems.append("username: The pupil has no username.")
        elif username in self.usernames:
            checked.problems.append(
                f"username: {username} is also the username of the pupil on line "
                f"{self.usernames[username]}; usernames must differ."
            )
        if self._reported(person, checked):
            return
        self.usernames[username] = person.line
        classes = self._desired(person.sourced_id, set(), checked)
        made = self.settings.roster_made_passwords and not (
            checked.level == Level.PRIMARY.value and self.settings.primary_cards_only
        )
        self.plan.joiners.append(
            Joiner(
                person.sourced_id, username, checked.first_name, checked.last_name,
                checked.email, checked.dob.isoformat(), checked.level, checked.grade,
                sorted(classes), made, stamp(person.date_last_modified),
            )
        )  # fmt: skip

    def _plan_taken(self, person: Person, account: AccountNow) -> None:
        learner = account.learner
        same = (
            learner is not None
            and learner.school_id == self.plan.school_id
            and learner.status == Learner.Status.ACTIVE
            and learner.dob == person.birth_date
            and account.linked_sourced_id in ("", person.sourced_id)
        )
        if not same:
            self._problem(person, f"username {self._normal(person)} is taken by another account.")
            return
        self._plan_matched(person, learner)

    def _plan_matched(self, person: Person, learner: LearnerNow) -> None:
        checked = pupil_checked(person, self.table, self.settings)
        if self._reported(person, checked):
            return
        current, old = self._current(learner.id)
        desired = self._desired(person.sourced_id, current, checked)
        self.plan.matched.append(
            Matched(learner.id, person.sourced_id, learner.name, checked.grade,
                    sorted(desired - current), stamp(person.date_last_modified))
        )  # fmt: skip
        change = self._change(person.sourced_id, learner, checked)
        change.groups_left = self._left(current - desired, old)
        if change.details or change.level_to or change.groups_left:
            self.plan.changes.append(change)

    def _plan_linked(self, person: Person, learner: LearnerNow) -> None:
        checked = pupil_checked(person, self.table, self.settings)
        if self._reported(person, checked):
            return
        if learner.left_at is not None:
            desired = self._desired(person.sourced_id, set(), checked)
            self.plan.returners.append(
                Returner(person.sourced_id, learner.id, learner.name, sorted(desired),
                         checked.grade, stamp(person.date_last_modified))
            )  # fmt: skip
            change = self._change(person.sourced_id, learner, checked)
            if change.details or change.level_to:
                self.plan.changes.append(change)
            return
        current, old = self._current(learner.id)
        desired = self._desired(person.sourced_id, current, checked)
        change = self._change(person.sourced_id, learner, checked)
        self._classes_change(change, current, desired, old)

    def _enrolments_only(self, sourced_id: str) -> None:
        """Plan the class moves of a current pupil a delta's enrolments name, users.csv not."""
        link = self.state.links.get((self.plan.school_id, sourced_id))
        learner = self.state.learners.get(link.learner_id) if link and link.learner_id else None
        if learner is None or not learner.current:
            return
        current, old = self._current(learner.id)
        desired = self._desired(sourced_id, current, None)
        for group_sid in desired:
            self.levels[group_sid].append(learner.level)
        self._classes_change(Change(learner.id, sourced_id, learner.name), current, desired, old)

    def _classes_change(self, change: Change, current: set, desired: set, old: list) -> None:
        change.classes_joined = sorted(desired - current)
        change.groups_left = self._left(current - desired, old)
        self.plan.enrolments_changed += len(change.classes_joined) + len(change.groups_left)
        if change.details or change.level_to or change.classes_joined or change.groups_left:
            self.plan.changes.append(change)

    def _leave(self, learner: LearnerNow, sourced_id: str, modified: str) -> None:
        if sourced_id in self.leaving or not self.leavers_counted:
            return
        self.leaving.add(sourced_id)
        self.plan.leavers.append(Leaver(learner.id, learner.name, sourced_id, modified))
        self.plan.enrolments_changed += len(self.state.members.get(learner.id, ()))

    def _current(self, learner_id: int) -> tuple[set[str], list[int]]:
        """Return a learner's roster classes, and their groups September archives."""
        groups = self.state.members.get(learner_id, ())
        archived = self.classes.archived
        old = sorted(group for group in groups if group in archived)
        return {self.group_sid[group] for group in groups if group not in archived}, old

    def _desired(self, sourced_id: str, current: set[str], checked: Checked | None) -> set[str]:
        """Return the roster classes (sourcedIds) a pupil is in once the sync is applied."""
        mode = self.files.mode("enrollments")
        year_groups = {sid for sid in current if sid.startswith(YEAR_GROUP_PREFIX)}
        classes = current - year_groups
        if mode == BULK:
            classes = set(self.joins.get(sourced_id, ()))
        elif mode == DELTA:
            classes -= self.ends.get(sourced_id, set())
            classes |= self.joins.get(sourced_id, set())
        desired = classes & self.known
        if checked is None:
            return desired | year_groups
        if checked.grade:
            desired.add(self.classes.year_group(checked.grade, checked.level))
        for group_sid in desired:
            self.levels[group_sid].append(checked.level)
        return desired

    def _left(self, gone: set[str], old: list[int]) -> list[int]:
        ids = [self.classes.group_id(sid) for sid in gone]
        return sorted({group for group in ids if group is not None} | set(old))

    def _change(self, sourced_id: str, learner: LearnerNow, checked: Checked) -> Change:
        person = self.files.people.get(sourced_id)
        change = Change(learner.id, sourced_id, learner.name, grade=checked.grade)
        change.last_modified = stamp(person.date_last_modified) if person else ""
        for name in ("first_name", "last_name", "email"):
            value = getattr(checked, name)
            if value and value != getattr(learner, name):
                change.details[name] = value
        if checked.dob != learner.dob:
            change.details["dob"] = checked.dob.isoformat()
        if checked.level != learner.level:
            change.level_from, change.level_to = learner.level, checked.level
        return change

    def _reported(self, person: Person, checked: Checked) -> bool:
        for reason in checked.problems:
            self._problem(person, reason)
        return bool(checked.problems)

    def _problem(self, person: Person, reason: str) -> None:
        self.problems.append(Problem("users.csv", person.line, reason, person.sourced_id))

    @staticmethod
    def _normal(person: Person) -> str:
        return username_normal_form(person.username)
