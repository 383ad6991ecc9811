"""The reading of one file set's rows: each file in turn, each row's id, status and references.

`FileRows` keeps what the files read so far hold, so that a row can be checked against them: a
sourcedId given twice, a reference to a row no file holds. References are checked only from a
bulk file to a bulk file: a delta may name rows the portal already holds, and what is right for
those is the planner's to say. roster.row_records makes each file's rows into records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import BinaryIO

from django.utils.translation import gettext as _

from roster.csv_rows import FileRead, RowError, csv_records
from roster.records import ABSENT, ACTIVE, BULK, TO_BE_DELETED, RosterFileSet

STATUSES = {"active": ACTIVE, "tobedeleted": TO_BE_DELETED}
# OneRoster 1.0 wrote "inactive"; exporters that say 1.1 sometimes still do.
STATUSES_1_1 = {**STATUSES, "inactive": TO_BE_DELETED}
COMMON = ("status", "dateLastModified")

Build = Callable[["FileRows", int, dict[str, str], bool], None]


@dataclass
class RoleRow:
    """A row of roles.csv (1.2): a user's role at an org."""

    line: int
    primary: bool
    role: str
    org_id: str


@dataclass
class FileRows:
    """What the files of one set read so far hold, around the records in `found`."""

    found: RosterFileSet
    open_file: Callable[[str], BinaryIO | None]
    # Per file (manifest name): each sourcedId and its line, and those whose row was bad.
    lines: dict[str, dict[str, int]] = field(default_factory=dict)
    bad: dict[str, dict[str, int]] = field(default_factory=dict)
    # demographics.csv and roles.csv, read before users.csv that they complete.
    birth_dates: dict[str, date | None] = field(default_factory=dict)
    roles: dict[str, list[RoleRow]] = field(default_factory=dict)
    interned: dict[str, str] = field(default_factory=dict)

    def read(self, name: str, required: tuple, optional: tuple, build: Build) -> None:
        """Read one file's rows with `build`; note it missing, empty, cut off or unreadable."""
        mode = self.found.mode(name)
        if mode == ABSENT:
            return  # even when the set holds the file: the manifest says it is not given
        read = FileRead(f"{name}.csv")
        stream = self.open_file(read.name)
        if stream is None:
            read.problem(
                0,
                _(
                    "the manifest gives it as %(mode)s, but the roster has no such file, so it "
                    "is read as absent."
                )
                % {"mode": mode},
            )
            self.found.modes[name] = ABSENT
            self.found.problems += read.problems
            return
        self.lines[name], self.bad[name] = {}, {}
        id_column = "userSourcedId" if name == "roles" else "sourcedId"
        with stream:
            records = csv_records(
                stream, read, required=required, optional=COMMON + optional, id_column=id_column
            )
            for line, values in records:
                try:
                    build(self, line, values, mode == BULK)
                except RowError as error:
                    read.problem(line, str(error), values.get(id_column, ""))
        for problem in read.problems:  # rows csv_records could not read are bad rows too
            self.mark_bad(name, problem.sourced_id, problem.line)
        self.found.problems += read.problems
        if read.unreadable:
            self.found.modes[name] = ABSENT  # nothing of it is known: never the whole truth
        elif mode == BULK and not read.records:
            self.found.empty_files.append(read.name)
        if read.truncated:
            self.found.truncated_files.append(read.name)

    def mark_bad(self, name: str, sourced_id: str, line: int) -> None:
        """Note that the row giving this id first could not be read."""
        # A later row giving the id again is a duplicate: the first row stays as it was.
        if sourced_id and self.lines[name].setdefault(sourced_id, line) == line:
            self.bad[name].setdefault(sourced_id, line)

    def start(self, name: str, line: int, values: dict[str, str], bulk: bool) -> tuple[str, str]:
        """Return a row's sourcedId and status, checked: given, not seen before, spelled well."""
        sourced_id = values.get("sourcedId", "")
        if not sourced_id:
            raise RowError(_("sourcedId is blank."))
        first = self.lines[name].setdefault(sourced_id, line)
        if first != line:
            raise RowError(
                _("sourcedId '%(id)s' is given again (first on line %(line)s).")
                % {"id": sourced_id, "line": first}
            )
        return self.intern(sourced_id), self.status(values.get("status", ""), bulk)

    def status(self, value: str, bulk: bool) -> str:
        """Return a row's status; a bulk file may leave it blank (active)."""
        if not value:
            if bulk:
                return ACTIVE
            raise RowError(_("status is blank; a delta file gives active or tobedeleted."))
        statuses = STATUSES_1_1 if self.found.version == "1.1" else STATUSES
        status = statuses.get(value.lower())
        if status is None:
            raise RowError(
                _("status '%(value)s' is neither active nor tobedeleted.") % {"value": value[:40]}
            )
        return status

    def intern(self, value: str) -> str:
        """Return one string object for each value that repeats (ids, roles): less memory."""
        return self.interned.setdefault(value, value)

    def given(self, values: dict[str, str], *columns: str) -> None:
        """Refuse a row in which one of these columns is blank."""
        for column in columns:
            if not values.get(column):
                raise RowError(_("%(column)s is blank.") % {"column": column})

    def refer(self, source: str, target: str, column: str, ids: Iterable[str]) -> None:
        """Refuse a row of a bulk file naming a row that a bulk `target` file does not hold."""
        if self.found.mode(source) != BULK or self.found.mode(target) != BULK:
            return
        if f"{target}.csv" in self.found.empty_files:
            return  # the empty file is the problem, once
        held, bad = self.lines[target], self.bad[target]
        for sourced_id in ids:
            values = {"column": column, "id": sourced_id, "file": f"{target}.csv"}
            if sourced_id not in held:
                raise RowError(_("%(column)s '%(id)s' is not in %(file)s.") % values)
            if sourced_id in bad:
                raise RowError(
                    _(
                        "%(column)s '%(id)s' is on line %(line)s of %(file)s, which could not "
                        "be read."
                    )
                    % {**values, "line": bad[sourced_id]}
                )

    def check_users_known(self, name: str, column: str, lines: dict[str, int]) -> None:
        """Note rows of a bulk file (demographics, roles) for users that users.csv lacks."""
        if self.found.mode(name) != BULK or self.found.mode("users") != BULK:
            return
        if "users.csv" in self.found.empty_files:
            return
        read = FileRead(f"{name}.csv")
        for user_id, line in lines.items():
            if user_id not in self.lines["users"]:
                values = {"column": column, "id": user_id}
                read.problem(line, _("%(column)s '%(id)s' is not in users.csv.") % values, user_id)
        self.found.problems += read.problems

    def check_roles_given(self) -> None:
        """Note a 1.2 set whose users have no role because it has no roles.csv."""
        if self.found.version != "1.2" or self.found.mode("roles") != ABSENT:
            return
        count = sum(1 for person in self.found.people.values() if not person.role)
        if count:
            read = FileRead("roles.csv")
            message = _(
                "the roster has no roles.csv (where version 1.2 says who is a student and who a "
                "teacher), so %(count)s users have no role."
            )
            read.problem(0, message % {"count": count})
            self.found.problems += read.problems
