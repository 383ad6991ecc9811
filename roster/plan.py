"""A sync's effect, worked out before anything changes: per school, who joins, leaves, changes.

roster.planning makes a `SyncPlan` from a `RosterFileSet` and what the portal holds; the sync
keeps it as JSON (`RosterSync.plan`) so that the preview an admin reads is exactly what
approving it applies (roster.applying). Ids: `sourced_id`s are the roster's; `learner_id`,
`group_id` and `user_id` the portal's. Dates are ISO strings in the JSON.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from roster.records import Problem


@dataclass
class Joiner:
    """A pupil new to the portal: registered upstream through the bulk run."""

    sourced_id: str
    username: str
    first_name: str
    last_name: str
    email: str
    dob: str  # ISO date (a pupil without one is a problem, never a joiner)
    level: str
    grade: str
    class_ids: list[str]  # the classes' sourcedIds (year groups too: see YEAR_GROUP_PREFIX)
    made_password: bool  # a printed slip; False: signs in by card or school account
    last_modified: str = ""  # the row's dateLastModified (ISO), kept on its RosterPerson


@dataclass
class Returner:
    """A leaver the roster brings back: the same learner again."""

    sourced_id: str
    learner_id: int
    name: str
    class_ids: list[str]
    grade: str = ""
    last_modified: str = ""


@dataclass
class Leaver:
    learner_id: int
    name: str
    sourced_id: str = ""
    # The tobedeleted (or disabled) row's dateLastModified; "" for a pupil a bulk file lacks.
    last_modified: str = ""


@dataclass
class Change:
    """A current pupil whose details, level or classes change."""

    learner_id: int
    sourced_id: str
    name: str
    # Field name -> new value, of first_name, last_name, email, dob (ISO); never the username.
    details: dict[str, str] = field(default_factory=dict)
    level_from: str = ""
    level_to: str = ""  # empty: unchanged
    classes_joined: list[str] = field(default_factory=list)  # sourcedIds
    groups_left: list[int] = field(default_factory=list)  # the portal's group ids
    grade: str = ""  # the pupil's grade now (kept on their RosterPerson)
    last_modified: str = ""


@dataclass
class Matched:
    """A learner the portal already had, now linked to the roster's pupil.

    Either a learner registered by hand (same school, username and date of birth) or the one
    an earlier sync's registration made. Applying links them and puts them in `class_ids`;
    their details or level, if the roster gives them differently, are a `Change` of their own.
    """

    learner_id: int
    sourced_id: str
    name: str
    grade: str = ""
    class_ids: list[str] = field(default_factory=list)  # roster classes to join (sourcedIds)
    last_modified: str = ""


@dataclass
class NewClass:
    sourced_id: str
    name: str
    kind: str  # classes.SchoolGroup.Kind value
    level: str
    academic_year: str  # "2026/27"
    last_modified: str = ""


@dataclass
class ClassChange:
    """A class the roster made before whose name, kind or level it now gives differently."""

    sourced_id: str
    group_id: int
    name: str
    kind: str
    level: str
    last_modified: str = ""


@dataclass
class Archived:
    """Last year's class, archived at September (read-only, history kept)."""

    group_id: int
    name: str
    academic_year: str


@dataclass
class StaffMember:
    """A teacher of users.csv: a new account (user_id None) or one matched by email."""

    sourced_id: str
    user_id: int | None
    username: str
    email: str
    first_name: str
    last_name: str
    class_ids: list[str]  # the classes they teach (sourcedIds)
    last_modified: str = ""
    # A matched account of another school: given the teacher role in this one, so that
    # they see the classes they are linked to (a role it has here is never changed).
    role_added: bool = False


@dataclass
class SchoolPlan:
    school_id: int
    code: str
    name: str
    # The figures the hold compares against: the school's roster pupils and their enrolments
    # before this sync (0 on a school's first sync, which is never held for its size).
    learners_before: int = 0
    enrolments_before: int = 0
    enrolments_changed: int = 0
    joiners: list[Joiner] = field(default_factory=list)
    returners: list[Returner] = field(default_factory=list)
    leavers: list[Leaver] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    new_classes: list[NewClass] = field(default_factory=list)
    class_changes: list[ClassChange] = field(default_factory=list)
    archived: list[Archived] = field(default_factory=list)
    staff: list[StaffMember] = field(default_factory=list)
    matched: list[Matched] = field(default_factory=list)
    # Set when the files start a new academic year for this school ("2027/28").
    new_academic_year: str = ""
    # Why this school's part is held, in sentences; empty: nothing looks wrong.
    hold_reasons: list[str] = field(default_factory=list)

    @property
    def joined(self) -> int:
        return len(self.joiners) + len(self.returners)

    @property
    def left(self) -> int:
        return len(self.leavers)

    @property
    def changed(self) -> int:
        return len(self.changes)


@dataclass
class SyncPlan:
    schools: list[SchoolPlan] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # Why the whole sync is held (an empty or truncated file), in sentences.
    hold_reasons: list[str] = field(default_factory=list)
    # When it was worked out (ISO, under the sync lock): a sync applied after it makes it stale.
    planned_at: str = ""
    # Whether each problem names its school (Problem.school_id); False for plans kept before.
    problem_schools: bool = True

    @property
    def held(self) -> bool:
        return bool(self.hold_reasons) or any(school.hold_reasons for school in self.schools)

    @property
    def joined(self) -> int:
        return sum(school.joined for school in self.schools)

    @property
    def left(self) -> int:
        return sum(school.left for school in self.schools)

    @property
    def changed(self) -> int:
        return sum(school.changed for school in self.schools)

    def to_json(self) -> dict[str, Any]:
        """Return the plan as JSON-ready data (RosterSync.plan)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SyncPlan:
        """Return the plan kept by `to_json`."""
        return cls(
            schools=[_school_from_json(school) for school in data.get("schools", [])],
            problems=[Problem(**problem) for problem in data.get("problems", [])],
            hold_reasons=list(data.get("hold_reasons", [])),
            planned_at=data.get("planned_at", ""),
            problem_schools=data.get("problem_schools", False),
        )

    def problems_of(self, school_id: int) -> list[Problem]:
        """Return the problems a school's admin reads: the school's rows and whole files'.

        A row whose school is unknown (the reader's) is for a trust admin only. Needs
        `problem_schools`: older plans' problems do not say their school.
        """
        return [p for p in self.problems if p.school_id == school_id or _whole_file(p)]

    def school_figures(self) -> dict[str, dict[str, int]]:
        """Return each school's counts (RosterSync.school_figures), keyed by its id as text."""
        return {
            str(school.school_id): {
                "joined": school.joined,
                "left": school.left,
                "changed": school.changed,
                "problems": len(self.problems_of(school.school_id)),
            }
            for school in self.schools
        }


def _whole_file(problem: Problem) -> bool:
    """Return whether a problem is of a file as a whole (its header, the manifest), no row's."""
    if problem.school_id is not None or problem.sourced_id:
        return False
    return problem.line <= 1 or problem.file == "manifest.csv"


# A year group is made by the portal from pupils' grades (OneRoster has none): its sourcedId
# in a plan is this prefix, the school's id, the grade and the academic year.
YEAR_GROUP_PREFIX = "year-group:"

_LISTS = {
    "joiners": Joiner,
    "returners": Returner,
    "leavers": Leaver,
    "changes": Change,
    "new_classes": NewClass,
    "class_changes": ClassChange,
    "archived": Archived,
    "staff": StaffMember,
    "matched": Matched,
}


def _school_from_json(data: dict[str, Any]) -> SchoolPlan:
    values = {}
    for item in fields(SchoolPlan):
        if item.name not in data:
            continue
        kind = _LISTS.get(item.name)
        values[item.name] = (
            [kind(**entry) for entry in data[item.name]] if kind else data[item.name]
        )
    return SchoolPlan(**values)
