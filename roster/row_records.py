"""Each OneRoster file's rows made into records, every value and reference checked.

`read_files` reads a set's files in the order their references need: orgs, sessions and courses
before the classes that name them, demographics and roles (1.2) before the users they complete,
users and classes before enrolments. Columns are the spec's (1.1 and 1.2 alike unless said);
only those the portal uses are asked for, the others ignored.
"""

from __future__ import annotations

from django.utils.translation import gettext as _

from roster.csv_rows import RowError, parse_bool, parse_date, parse_stamp, parse_year, split_list
from roster.file_rows import FileRows, RoleRow
from roster.records import (
    ACTIVE,
    BULK,
    AcademicSession,
    Course,
    Enrolment,
    Org,
    Person,
    RosterClass,
)

ROLES = (
    *("administrator", "aide", "counselor", "districtAdministrator", "guardian", "parent"),
    *("principal", "proctor", "relative", "siteAdministrator", "student"),
    *("systemAdministrator", "teacher"),
)
ROLE_SPELLINGS = {role.lower(): role for role in ROLES}
ORG_TYPES = {
    kind: kind for kind in ("school", "district", "local", "state", "national", "department")
}
SESSION_TYPES = {kind.lower(): kind for kind in ("schoolYear", "term", "semester", "gradingPeriod")}
CLASS_TYPES = {"homeroom": "homeroom", "scheduled": "scheduled"}
USER_COLUMNS = ("enabledUser", "username", "email", "identifier", "grades", "role")
USER_COLUMNS += ("orgSourcedIds", "primaryOrgSourcedId")


def read_files(rows: FileRows) -> None:
    """Read every file the manifest gives into `rows.found`, in the order references need."""
    rows.read("orgs", ("sourcedId", "name", "type"), ("identifier", "parentSourcedId"), org)
    rows.read(
        "academicSessions",
        ("sourcedId", "title", "type", "startDate", "endDate"),
        ("schoolYear", "parentSourcedId"),
        session,
    )
    rows.read("courses", ("sourcedId", "title"), ("courseCode", "orgSourcedId", "grades"), course)
    rows.read("demographics", ("sourcedId", "birthDate"), (), demographic)
    if rows.found.version == "1.2":
        rows.read("roles", ("userSourcedId", "role", "orgSourcedId"), ("roleType",), role_row)
    users = ("sourcedId", "givenName", "familyName")
    if rows.found.version == "1.1":
        users += ("role", "orgSourcedIds")  # 1.2 moved them to roles.csv
    rows.read("users", users, USER_COLUMNS, user)
    rows.read(
        "classes",
        ("sourcedId", "title", "classType", "schoolSourcedId"),
        ("classCode", "courseSourcedId", "termSourcedIds", "grades"),
        klass,
    )
    rows.read(
        "enrollments",
        ("sourcedId", "classSourcedId", "userSourcedId", "role"),
        ("schoolSourcedId", "primary"),
        enrolment,
    )
    rows.check_users_known("demographics", "sourcedId", rows.lines.get("demographics", {}))
    role_lines = {user_id: found[0].line for user_id, found in rows.roles.items()}
    rows.check_users_known("roles", "userSourcedId", role_lines)
    rows.check_roles_given()


def org(rows: FileRows, line: int, values: dict[str, str], bulk: bool) -> None:
    sourced_id, status = rows.start("orgs", line, values, bulk)
    rows.given(values, "name", "type")
    rows.found.orgs[sourced_id] = Org(
        sourced_id=sourced_id,
        status=status,
        name=values["name"],
        type=ORG_TYPES.get(values["type"].lower(), values["type"]),
        identifier=values.get("identifier") or sourced_id,
        parent_id=values.get("parentSourcedId", ""),
        line=line,
    )


def session(rows: FileRows, line: int, values: dict[str, str], bulk: bool) -> None:
    sourced_id, status = rows.start("academicSessions", line, values, bulk)
    rows.given(values, "title", "type")
    start = parse_date(values["startDate"], "startDate")
    end = parse_date(values["endDate"], "endDate")
    if end < start:
        raise RowError(
            _("endDate %(end)s is before startDate %(start)s.") % {"end": end, "start": start}
        )
    rows.found.sessions[sourced_id] = AcademicSession(
        sourced_id=sourced_id,
        status=status,
        title=values["title"],
        type=SESSION_TYPES.get(values["type"].lower(), values["type"]),
        start=start,
        end=end,
        school_year=parse_year(values.get("schoolYear", ""), end),
        parent_id=values.get("parentSourcedId", ""),
    )


def course(rows: FileRows, line: int, values: dict[str, str], bulk: bool) -> None:
    sourced_id, status = rows.start("courses", line, values, bulk)
    rows.given(values, "title")
    rows.found.courses[sourced_id] = Course(
        sourced_id=sourced_id,
        status=status,
        title=values["title"],
        course_code=values.get("courseCode", ""),
        org_id=rows.intern(values.get("orgSourcedId", "")),
        grades=split_list(values.get("grades", "")),
    )


def demographic(rows: FileRows, line: int, values: dict[str, str], bulk: bool) -> None:
    sourced_id, status = rows.start("demographics", line, values, bulk)
    birth = values["birthDate"]
    birth_date = parse_date(birth, "birthDate") if birth else None
    rows.birth_dates[sourced_id] = birth_date if status == ACTIVE else None


def role_row(rows: FileRows, line: int, values: dict[str, str], bulk: bool) -> None:
    rows.status(values.get("status", ""), bulk)
    rows.given(values, "userSourcedId", "role", "orgSourcedId")
    kind = values.get("roleType", "").lower() or "primary"
    if kind not in ("primary", "secondary"):
        raise RowError(
            _("roleType '%(value)s' is neither primary nor secondary.") % {"value": kind[:40]}
        )
    org_id = values["orgSourcedId"]
    rows.refer("roles", "orgs", "orgSourcedId", [org_id])
    role = ROLE_SPELLINGS.get(values["role"].lower(), values["role"])
    found = RoleRow(line=line, primary=kind == "primary", role=rows.intern(role), org_id=org_id)
    rows.roles.setdefault(values["userSourcedId"], []).append(found)


def user(rows: FileRows, line: int, values: dict[str, str], bulk: bool) -> None:
    sourced_id, status = rows.start("users", line, values, bulk)
    role, org_ids = user_role(rows, values)
    if status == ACTIVE:
        rows.given(values, "givenName", "familyName")
        if rows.found.version == "1.1":
            rows.given(values, "role", "orgSourcedIds")
        elif not role and rows.found.mode("roles") == BULK:
            raise RowError(_("roles.csv gives this user no role."))
        rows.refer("users", "orgs", "orgSourcedIds", org_ids)
    rows.found.people[sourced_id] = Person(
        sourced_id=sourced_id,
        status=status,
        date_last_modified=parse_stamp(values.get("dateLastModified", "")),
        enabled=parse_bool(values.get("enabledUser", ""), "enabledUser", blank=True),
        role=role,
        username=values.get("username", ""),
        given_name=values["givenName"],
        family_name=values["familyName"],
        email=values.get("email", ""),
        identifier=values.get("identifier", ""),
        org_ids=org_ids,
        grades=tuple(rows.intern(grade) for grade in split_list(values.get("grades", ""))),
        birth_date=rows.birth_dates.get(sourced_id),
        line=line,
    )


def user_role(rows: FileRows, values: dict[str, str]) -> tuple[str, tuple[str, ...]]:
    """Return a user's role and orgs: in 1.2 from roles.csv, the primary role and org first."""
    roles = sorted(rows.roles.get(values["sourcedId"], ()), key=lambda row: not row.primary)
    # Some 1.2 exporters still write 1.1's role column: it is read when roles.csv has none.
    role = roles[0].role if roles else values.get("role", "")
    orgs = [*split_list(values.get("primaryOrgSourcedId", ""))]
    orgs += [row.org_id for row in roles]
    orgs += split_list(values.get("orgSourcedIds", ""))
    role = ROLE_SPELLINGS.get(role.lower(), role)
    return rows.intern(role), tuple(rows.intern(org) for org in dict.fromkeys(orgs))


def klass(rows: FileRows, line: int, values: dict[str, str], bulk: bool) -> None:
    sourced_id, status = rows.start("classes", line, values, bulk)
    kind = CLASS_TYPES.get(values["classType"].lower())
    term_ids = split_list(values.get("termSourcedIds", ""))
    course_id = values.get("courseSourcedId", "")
    if status == ACTIVE:
        if kind is None:
            raise RowError(
                _("classType '%(value)s' is neither homeroom nor scheduled.")
                % {"value": values["classType"][:40]}
            )
        rows.given(values, "title", "schoolSourcedId")
        rows.refer("classes", "orgs", "schoolSourcedId", [values["schoolSourcedId"]])
        rows.refer("classes", "courses", "courseSourcedId", [course_id] if course_id else [])
        rows.refer("classes", "academicSessions", "termSourcedIds", term_ids)
    rows.found.classes[sourced_id] = RosterClass(
        sourced_id=sourced_id,
        status=status,
        date_last_modified=parse_stamp(values.get("dateLastModified", "")),
        title=values["title"],
        class_code=values.get("classCode", ""),
        class_type=kind or values["classType"],
        course_id=rows.intern(course_id),
        org_id=rows.intern(values["schoolSourcedId"]),
        term_ids=tuple(rows.intern(term_id) for term_id in term_ids),
        grades=tuple(rows.intern(grade) for grade in split_list(values.get("grades", ""))),
    )


def enrolment(rows: FileRows, line: int, values: dict[str, str], bulk: bool) -> None:
    sourced_id, status = rows.start("enrollments", line, values, bulk)
    stamp = parse_stamp(values.get("dateLastModified", ""))
    primary = parse_bool(values.get("primary", ""), "primary", blank=False)
    if status == ACTIVE:
        rows.given(values, "classSourcedId", "userSourcedId", "role")
        rows.refer("enrollments", "classes", "classSourcedId", [values["classSourcedId"]])
        rows.refer("enrollments", "users", "userSourcedId", [values["userSourcedId"]])
    role = ROLE_SPELLINGS.get(values["role"].lower(), values["role"])
    rows.found.enrolments.append(
        Enrolment(
            sourced_id=sourced_id,
            status=status,
            date_last_modified=stamp,
            class_id=rows.intern(values["classSourcedId"]),
            person_id=rows.intern(values["userSourcedId"]),
            org_id=rows.intern(values.get("schoolSourcedId", "")),
            role=rows.intern(role),
            primary=primary,
        )
    )
