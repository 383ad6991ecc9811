"""The classes part of a plan: academic years, year groups, new and changed classes, September.

roster.planning states the rules; this works them out for one school.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date

from classes.models import SchoolGroup, current_academic_year
from partner_api.levels import Level
from roster.grades import grade_key, grade_level
from roster.plan import YEAR_GROUP_PREFIX, Archived, ClassChange, NewClass, SchoolPlan
from roster.planning_state import GroupNow, PortalState
from roster.records import ACTIVE, BULK, DELTA, AcademicSession, RosterClass, RosterFileSet

NAME_MAX_LENGTH = SchoolGroup._meta.get_field("name").max_length
KINDS = {"homeroom": SchoolGroup.Kind.TUTOR_GROUP, "scheduled": SchoolGroup.Kind.TEACHING_CLASS}
RECEPTION = {"R", "REC", "RECEPTION", "KG"}
# Levels in the order a tie between a class's pupils is settled.
LEVEL_ORDER = [level.value for level in Level]


def year_of(session: AcademicSession) -> str:
    """Return a session's academic year: its schoolYear ("2027": 2026/27), else its start's."""
    # A US school year starts in August, before the September `current_academic_year` counts
    # from: the year the file gives is the surer guide.
    year = session.school_year.strip()
    if session.type == "schoolYear" and len(year) == 4 and year.isdigit():
        return f"{int(year) - 1}/{year[2:]}"
    return current_academic_year(session.start)


def session_year(session_id: str, sessions: dict[str, AcademicSession]) -> str | None:
    """Return the academic year of a term: its schoolYear session's, else its own start's."""
    session = sessions.get(session_id)
    if session is None:
        return None
    parent = sessions.get(session.parent_id)
    if session.type != "schoolYear" and parent is not None and parent.type == "schoolYear":
        return year_of(parent)
    return year_of(session)


def class_year(klass: RosterClass, sessions: dict[str, AcademicSession]) -> str | None:
    """Return the academic year of a class (its latest term's), or None if no term is known."""
    years = [session_year(term, sessions) for term in klass.term_ids]
    return max((year for year in years if year), default=None)


def files_year(files: RosterFileSet, classes: list[RosterClass]) -> str | None:
    """Return the files' academic year: the latest of active classes, else of sessions."""
    years = [class_year(klass, files.sessions) for klass in classes if klass.status == ACTIVE]
    found = max((year for year in years if year), default=None)
    if found:
        return found
    sessions = [s for s in files.sessions.values() if s.status == ACTIVE]
    school_years = [s for s in sessions if s.type == "schoolYear"] or sessions
    return max((year_of(session) for session in school_years), default=None)


def year_group_name(grade: str) -> str:
    """Return a year group's name: "Year 7" for grades 01-13, "Reception", else "Grade X"."""
    key = grade_key(grade)
    number = key.removeprefix("YEAR ").removeprefix("Y")
    if number.isdigit() and 1 <= int(number) <= 13:
        return f"Year {int(number)}"
    if key in RECEPTION:
        return "Reception"
    return f"Grade {grade.strip()}"


def year_group_id(school_id: int, grade: str, year: str) -> str:
    return f"{YEAR_GROUP_PREFIX}{school_id}:{grade_key(grade)}:{year}"


@dataclass
class ClassPlanner:
    """One school's classes: which the plan knows, which are new, changed or archived."""

    school_id: int
    files: RosterFileSet
    state: PortalState
    table: dict[str, str]
    further_education: bool
    classes: list[RosterClass]  # the school's rows of classes.csv
    today: date
    year: str = ""  # the academic year the plan builds
    september: bool = False
    archived: dict[int, GroupNow] = field(default_factory=dict)  # by group id
    # sourcedId -> (name, kind, level or "" to take the pupils', class row or None)
    wanted: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    dropped: set[str] = field(default_factory=set)  # classes a delta gives as tobedeleted
    stamps: dict[str, str] = field(default_factory=dict)  # sourcedId -> dateLastModified

    def __post_init__(self) -> None:
        mine = [group for group in self.state.groups.values() if group.school_id == self.school_id]
        existing_year = max((group.academic_year for group in mine), default="")
        year = files_year(self.files, self.classes)
        self.year = year or existing_year or current_academic_year(self.today)
        self.existing_year = existing_year
        self.september = bool(existing_year) and self.year > existing_year
        if self.september:
            self.archived = {g.id: g for g in mine if g.academic_year < self.year}
        self.mine = {g.sourced_id: g for g in mine if g.id not in self.archived}
        stale = self.files.mode("classes") == DELTA
        for klass in self.classes:
            group = self.mine.get(klass.sourced_id)
            if stale and group and not_newer(klass.date_last_modified, group.last_modified):
                continue
            if klass.status != ACTIVE:
                self.dropped.add(klass.sourced_id)
                continue
            if (class_year(klass, self.files.sessions) or self.year) < self.year:
                continue  # last year's class in this year's files: nothing to build
            title = (klass.title.strip() or klass.class_code or klass.sourced_id)[:NAME_MAX_LENGTH]
            level = grade_level(
                klass.grades, table=self.table, further_education=self.further_education
            )
            kind = KINDS.get(klass.class_type, SchoolGroup.Kind.TEACHING_CLASS)
            self.wanted[klass.sourced_id] = (title, kind, level or "")
            self.stamps[klass.sourced_id] = stamp(klass.date_last_modified)

    def known(self) -> set[str]:
        """Return the classes (not year groups) a pupil may be in after this sync."""
        if self.files.mode("classes") == BULK:
            return set(self.wanted)
        kept = {sid for sid in self.mine if not sid.startswith(YEAR_GROUP_PREFIX)}
        return (kept - self.dropped) | set(self.wanted)

    def group_id(self, sourced_id: str) -> int | None:
        group = self.mine.get(sourced_id)
        return group.id if group else None

    def year_group(self, grade: str, level: str) -> str:
        """Return the sourcedId of a grade's year group this year (planned on first use)."""
        sourced_id = year_group_id(self.school_id, grade, self.year)
        if sourced_id not in self.wanted:
            self.wanted[sourced_id] = (year_group_name(grade), SchoolGroup.Kind.YEAR_GROUP, level)
        return sourced_id

    def plan(self, plan: SchoolPlan, pupil_levels: dict[str, list[str]]) -> None:
        """Add the new, changed and archived classes to a school's plan."""
        if self.september:
            plan.new_academic_year = self.year
            plan.archived = [
                Archived(group.id, group.name, group.academic_year)
                for group in sorted(self.archived.values(), key=lambda g: (g.name, g.id))
            ]
        taken = set(self.state.hand_names.get((self.school_id, self.year), set()))
        taken |= {
            g.name.casefold()
            for sid, g in self.mine.items()
            if sid not in self.wanted and g.academic_year == self.year
        }
        for sourced_id in sorted(self.wanted):
            title, kind, level = self.wanted[sourced_id]
            name = _name_free(title, sourced_id, kind, taken)
            taken.add(name.casefold())
            level = level or _most_common(pupil_levels.get(sourced_id, []))
            group = self.mine.get(sourced_id)
            if group is None:
                plan.new_classes.append(
                    NewClass(
                        sourced_id, name, kind, level, self.year, self.stamps.get(sourced_id, "")
                    )
                )
                continue
            level = level or group.level
            if (name, kind, level) != (group.name, group.kind, group.level):
                plan.class_changes.append(
                    ClassChange(
                        sourced_id, group.id, name, kind, level, self.stamps.get(sourced_id, "")
                    )
                )


def stamp(moment) -> str:
    """Return a row's dateLastModified as the plan keeps it (ISO), or "" when it gave none."""
    return moment.isoformat() if moment else ""


def not_newer(row_stamp, kept_stamp) -> bool:
    """Return whether a delta row's dateLastModified is no newer than what was applied."""
    return row_stamp is not None and kept_stamp is not None and row_stamp <= kept_stamp


def _name_free(title: str, sourced_id: str, kind: str, taken: set[str]) -> str:
    """Return the class's name, told apart from a group of the same name that year."""
    if title.casefold() not in taken:
        return title
    suffix = " (roster)" if kind == SchoolGroup.Kind.YEAR_GROUP else f" ({sourced_id})"
    return title[: max(NAME_MAX_LENGTH - len(suffix), 1)] + suffix[:NAME_MAX_LENGTH]


def _most_common(levels: list[str]) -> str:
    counts = Counter(level for level in levels if level)
    if not counts:
        return ""
    return min(counts, key=lambda level: (-counts[level], LEVEL_ORDER.index(level)))
