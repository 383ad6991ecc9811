"""What a OneRoster 1.1 or 1.2 file set says, once read and checked (roster.reading).

Only rows that passed their checks become records; every other row is a `Problem` naming its
file, line and reason. Dates are `date`s, times timezone-aware `datetime`s; ids are the files'
`sourcedId`s as given. A record's `status` is "active" or "tobedeleted" (1.1's and 1.2's
spellings both read as these).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

BULK = "bulk"
DELTA = "delta"
ABSENT = "absent"
ACTIVE = "active"
TO_BE_DELETED = "tobedeleted"

# The files a sync reads, by the manifest's names (`file.users` is users.csv).
FILES = (
    "orgs",
    "academicSessions",
    "users",
    "classes",
    "courses",
    "enrollments",
    "demographics",
)


@dataclass(frozen=True)
class Problem:
    """A row (or a whole file, line 0) the sync could not use, and why, in a sentence."""

    file: str  # e.g. "users.csv"
    line: int  # the file's line, the header being 1; 0 for the file as a whole
    reason: str
    sourced_id: str = ""
    # The portal school whose part of the sync the row is in (the planner's problems); None for
    # the reader's, whose school is unknown, and for a file as a whole.
    school_id: int | None = None


@dataclass(frozen=True)
class Org:
    sourced_id: str
    status: str
    name: str
    type: str  # school, district, local, state, national, department (1.1 and 1.2 values)
    identifier: str  # what a school's `code` is matched against (else the sourcedId)
    parent_id: str = ""
    line: int = 0  # its line in orgs.csv (the header being 1), for problems


@dataclass(frozen=True)
class AcademicSession:
    sourced_id: str
    status: str
    title: str
    type: str  # schoolYear, term, semester, gradingPeriod
    start: date
    end: date
    school_year: str  # the file's schoolYear, e.g. "2027" (the year the session ends in)
    parent_id: str = ""


@dataclass(frozen=True)
class Person:
    """A row of users.csv (with its birthDate from demographics.csv, if given)."""

    sourced_id: str
    status: str
    date_last_modified: datetime | None
    enabled: bool
    role: str  # student, teacher, administrator, ... as given (1.2: the primary role)
    username: str
    given_name: str
    family_name: str
    email: str
    identifier: str
    org_ids: tuple[str, ...]
    grades: tuple[str, ...]
    birth_date: date | None = None
    line: int = 0  # its line in users.csv (the header being 1), for problems


@dataclass(frozen=True)
class Course:
    sourced_id: str
    status: str
    title: str
    course_code: str
    org_id: str
    grades: tuple[str, ...] = ()


@dataclass(frozen=True)
class RosterClass:
    """A row of classes.csv."""

    sourced_id: str
    status: str
    date_last_modified: datetime | None
    title: str
    class_code: str
    class_type: str  # homeroom (a tutor group) or scheduled (a teaching class)
    course_id: str
    org_id: str  # the school
    term_ids: tuple[str, ...]
    grades: tuple[str, ...] = ()


@dataclass(frozen=True)
class Enrolment:
    """A row of enrollments.csv: a person in a class, as a student or a teacher."""

    sourced_id: str
    status: str
    date_last_modified: datetime | None
    class_id: str
    person_id: str
    org_id: str
    role: str  # student, teacher, administrator, ...
    primary: bool = False


@dataclass
class RosterFileSet:
    """Every file of one roster, read and checked; what could not be read is in `problems`."""

    version: str  # "1.1" or "1.2"
    # Each file's mode from the manifest: "bulk", "delta" or "absent".
    modes: dict[str, str]
    orgs: dict[str, Org] = field(default_factory=dict)
    sessions: dict[str, AcademicSession] = field(default_factory=dict)
    people: dict[str, Person] = field(default_factory=dict)
    courses: dict[str, Course] = field(default_factory=dict)
    classes: dict[str, RosterClass] = field(default_factory=dict)
    enrolments: list[Enrolment] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # Files the manifest names bulk that hold no row, or whose end is cut off (a last line
    # with too few fields, an unclosed quote): a sync of such files is held, never applied.
    empty_files: list[str] = field(default_factory=list)
    truncated_files: list[str] = field(default_factory=list)

    def mode(self, name: str) -> str:
        """Return how the manifest gives a file (absent when it does not name it)."""
        return self.modes.get(name, ABSENT)


class RosterUnreadable(Exception):
    """The roster as a whole cannot be read (not a zip or folder, no manifest, too big)."""
