"""OneRoster CSV file sets written by code, in version 1.1 or 1.2: for the tests and the demo.

`RosterSpec` says who is in the school's records; `roster_write` writes it as a folder (or a
zip) the way a management information system exports it: a manifest naming each file bulk,
delta or absent, then orgs, academicSessions, users (1.2: with roles.csv), courses, classes,
enrollments and demographics. `trust_spec` makes a large trust's roster for scale (the tests,
`make bench`); `demo_spec` the demo trust's two schools (`manage.py demo_roster`).
"""

from __future__ import annotations

import csv
import io
import zipfile
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

STAMP = "2026-09-01T08:00:00.000Z"


@dataclass(frozen=True)
class School:
    sourced_id: str
    name: str
    code: str  # the orgs.csv identifier the portal matches its schools' codes against


@dataclass(frozen=True)
class Pupil:
    sourced_id: str
    given_name: str
    family_name: str
    grade: str
    birth_date: date | None
    school: str  # the org's sourcedId
    username: str = ""
    email: str = ""
    status: str = "active"
    modified: str = STAMP

    @property
    def login(self) -> str:
        return self.username or f"{self.given_name}.{self.family_name}".lower()


@dataclass(frozen=True)
class Teacher:
    sourced_id: str
    given_name: str
    family_name: str
    email: str
    school: str
    role: str = "teacher"  # "administrator" too: the roster never grants powers
    status: str = "active"
    modified: str = STAMP


@dataclass(frozen=True)
class Klass:
    sourced_id: str
    title: str
    school: str
    term: str = "term-2026"
    class_type: str = "scheduled"  # homeroom: a tutor group
    grades: tuple[str, ...] = ()
    status: str = "active"
    modified: str = STAMP


@dataclass(frozen=True)
class Term:
    sourced_id: str
    title: str
    start: date
    end: date
    school_year: str  # the year it ends in, as OneRoster writes it: "2027" for 2026/27


@dataclass
class RosterSpec:
    schools: list[School]
    pupils: list[Pupil] = field(default_factory=list)
    teachers: list[Teacher] = field(default_factory=list)
    classes: list[Klass] = field(default_factory=list)
    # (class sourcedId, person sourcedId, role); a status may follow for a delta.
    enrolments: list[tuple] = field(default_factory=list)
    terms: list[Term] = field(
        default_factory=lambda: [
            Term("term-2026", "2026/27", date(2026, 9, 1), date(2027, 7, 20), "2027")
        ]
    )
    # File name (without .csv) -> bulk, delta or absent; unnamed files are bulk.
    modes: dict[str, str] = field(default_factory=dict)

    def without(self, *pupil_ids: str) -> RosterSpec:
        """Return the same roster with these pupils (and their enrolments) gone."""
        gone = set(pupil_ids)
        return replace(
            self,
            pupils=[p for p in self.pupils if p.sourced_id not in gone],
            enrolments=[e for e in self.enrolments if e[1] not in gone],
        )


FILES = ("orgs", "academicSessions", "users", "courses", "classes", "enrollments", "demographics")
OTHER_FILES = ("categories", "classResources", "courseResources", "lineItems", "resources",
               "results")  # fmt: skip
OTHER_FILES_1_2 = ("userProfiles", "scoreScales")


def roster_write(
    spec: RosterSpec, path: Path, *, version: str = "1.1", as_zip: bool = False
) -> Path:
    """Write the roster under `path` (a folder, or `path`.zip); return what was written."""
    files = _files(spec, version)
    if as_zip:
        # `path`.zip, even when its name has a dot ("roster-1.2" is not "roster-1.zip").
        target = path if path.suffix == ".zip" else path.with_name(f"{path.name}.zip")
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, text in files.items():
                archive.writestr(name, text)
        return target
    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (path / name).write_text(text, encoding="utf-8", newline="")
    return path


def _csv(header: list[str], rows: list[list]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def _files(spec: RosterSpec, version: str) -> dict[str, str]:
    modes = {name: spec.modes.get(name, "bulk") for name in FILES}
    if version == "1.2":
        modes["roles"] = spec.modes.get("roles", modes["users"])
    bulk = {name: mode == "bulk" for name, mode in modes.items()}

    def status(value: str, name: str) -> str:
        # In a bulk file status and dateLastModified may be blank (1.2 says they must be).
        return "" if bulk[name] and version == "1.2" else value

    def stamp(value: str, name: str) -> str:
        return "" if bulk[name] and version == "1.2" else value

    out: dict[str, str] = {}
    manifest = [["manifest.version", "1.0"], ["oneroster.version", version]]
    manifest += [[f"file.{name}", mode] for name, mode in modes.items()]
    # The manifest names every file of the version; those a roster does not use are absent.
    others = OTHER_FILES + (OTHER_FILES_1_2 if version == "1.2" else ())
    manifest += [[f"file.{name}", "absent"] for name in others]
    manifest += [["source.systemName", "Test MIS"], ["source.systemCode", "test"]]
    out["manifest.csv"] = _csv(["propertyName", "value"], manifest)
    if modes["orgs"] != "absent":
        out["orgs.csv"] = _csv(
            ["sourcedId", "status", "dateLastModified", "name", "type", "identifier",
             "parentSourcedId"],
            [[s.sourced_id, status("active", "orgs"), stamp(STAMP, "orgs"), s.name, "school",
              s.code, ""] for s in spec.schools],
        )  # fmt: skip
    if modes["academicSessions"] != "absent":
        header = ["sourcedId", "status", "dateLastModified", "title", "type", "startDate",
                  "endDate", "parentSourcedId", "schoolYear"]  # fmt: skip
        out["academicSessions.csv"] = _csv(
            header,
            [[t.sourced_id, status("active", "academicSessions"),
              stamp(STAMP, "academicSessions"), t.title, "schoolYear", t.start.isoformat(),
              t.end.isoformat(), "", t.school_year] for t in spec.terms],
        )  # fmt: skip
    people = [
        (p.sourced_id, p.status, p.modified, "student", p.login, p.given_name, p.family_name,
         p.email, p.school, p.grade) for p in spec.pupils
    ] + [
        (t.sourced_id, t.status, t.modified, t.role, t.email, t.given_name, t.family_name,
         t.email, t.school, "") for t in spec.teachers
    ]  # fmt: skip
    if modes["users"] != "absent":
        if version == "1.1":
            header = ["sourcedId", "status", "dateLastModified", "enabledUser", "orgSourcedIds",
                      "role", "username", "userIds", "givenName", "familyName", "middleName",
                      "identifier", "email", "sms", "phone", "agentSourcedIds", "grades",
                      "password"]  # fmt: skip
            rows = [[sid, st, mod, "true", org, role, login, "", given, family, "", sid, email,
                     "", "", "", grade, ""]
                    for sid, st, mod, role, login, given, family, email, org, grade in people]  # noqa: E501  # fmt: skip
        else:
            header = ["sourcedId", "status", "dateLastModified", "enabledUser", "username",
                      "userIds", "givenName", "familyName", "middleName", "identifier", "email",
                      "sms", "phone", "agentSourcedIds", "grades", "password",
                      "userMasterIdentifier", "resourceSourcedIds", "preferredGivenName",
                      "preferredMiddleName", "preferredFamilyName", "primaryOrgSourcedId",
                      "pronouns"]  # fmt: skip
            rows = [[sid, status(st, "users"), stamp(mod, "users"), "true", login, "", given,
                     family, "", sid, email, "", "", "", grade, "", "", "", "", "", "", org, ""]
                    for sid, st, mod, role, login, given, family, email, org, grade in people]  # noqa: E501  # fmt: skip
            out["roles.csv"] = _csv(
                ["sourcedId", "status", "dateLastModified", "userSourcedId", "roleType", "role",
                 "beginDate", "endDate", "orgSourcedId", "userProfileSourcedId"],
                [[f"role-{sid}", status(st, "roles"), stamp(mod, "roles"), sid, "primary", role,
                  "", "", org, ""]
                 for sid, st, mod, role, login, given, family, email, org, grade in people],
            )  # fmt: skip
        out["users.csv"] = _csv(header, rows)
    if modes["courses"] != "absent":
        out["courses.csv"] = _csv(
            ["sourcedId", "status", "dateLastModified", "schoolYearSourcedId", "title",
             "courseCode", "grades", "orgSourcedId", "subjects", "subjectCodes"],
            [[f"course-{k.sourced_id}", status("active", "courses"), stamp(STAMP, "courses"),
              k.term, k.title, k.sourced_id, ",".join(k.grades), k.school, "", ""]
             for k in spec.classes],
        )  # fmt: skip
    if modes["classes"] != "absent":
        out["classes.csv"] = _csv(
            ["sourcedId", "status", "dateLastModified", "title", "grades", "courseSourcedId",
             "classCode", "classType", "location", "schoolSourcedId", "termSourcedIds",
             "subjects", "subjectCodes", "periods"],
            [[k.sourced_id, status(k.status, "classes"), stamp(k.modified, "classes"), k.title,
              ",".join(k.grades), f"course-{k.sourced_id}", k.sourced_id, k.class_type, "",
              k.school, k.term, "", "", ""] for k in spec.classes],
        )  # fmt: skip
    if modes["enrollments"] != "absent":
        schools = {p.sourced_id: p.school for p in spec.pupils}
        schools |= {t.sourced_id: t.school for t in spec.teachers}
        schools |= {k.sourced_id: k.school for k in spec.classes}
        rows = []
        for entry in spec.enrolments:
            class_id, person_id, role = entry[:3]
            entry_status = entry[3] if len(entry) > 3 else "active"
            rows.append(
                [f"enr-{class_id}-{person_id}", status(entry_status, "enrollments"),
                 stamp(STAMP, "enrollments"), class_id, schools.get(class_id, ""), person_id,
                 role, "true" if role == "teacher" else "false", "", ""]
            )  # fmt: skip
        out["enrollments.csv"] = _csv(
            ["sourcedId", "status", "dateLastModified", "classSourcedId", "schoolSourcedId",
             "userSourcedId", "role", "primary", "beginDate", "endDate"],
            rows,
        )  # fmt: skip
    if modes["demographics"] != "absent":
        out["demographics.csv"] = _csv(
            ["sourcedId", "status", "dateLastModified", "birthDate", "sex",
             "americanIndianOrAlaskaNative", "asian", "blackOrAfricanAmerican",
             "nativeHawaiianOrOtherPacificIslander", "white", "demographicRaceTwoOrMoreRaces",
             "hispanicOrLatinoEthnicity", "countryOfBirthCode", "stateOfBirthAbbreviation",
             "cityOfBirth", "publicSchoolResidenceStatus"],
            [[p.sourced_id, status("active", "demographics"), stamp(STAMP, "demographics"),
              p.birth_date.isoformat() if p.birth_date else "", "", "", "", "", "", "", "", "",
              "", "", "", ""] for p in spec.pupils],
        )  # fmt: skip
    return out


def school_spec(
    *,
    code: str = "SCHOOL",
    org: str = "org-1",
    pupils: int = 20,
    classes: int = 2,
    grade: str = "07",
    year_of_birth: int = 2014,
    prefix: str = "",
) -> RosterSpec:
    """Return one school's roster: pupils spread over classes, each class with a teacher."""
    prefix = prefix or org
    spec = RosterSpec(schools=[School(org, f"School {code}", code)])
    add_school(spec, org=org, pupils=pupils, classes=classes, grade=grade,
               year_of_birth=year_of_birth, prefix=prefix)  # fmt: skip
    return spec


def add_school(
    spec: RosterSpec,
    *,
    org: str,
    pupils: int,
    classes: int,
    grade: str,
    year_of_birth: int,
    prefix: str,
) -> None:
    """Add one school's pupils, classes, teachers and enrolments to a roster."""
    for number in range(1, classes + 1):
        klass = Klass(f"{prefix}-class-{number}", f"{grade}{chr(64 + number)}", org,
                      grades=(grade,))  # fmt: skip
        spec.classes.append(klass)
        teacher = Teacher(f"{prefix}-teacher-{number}", "Teacher", f"{prefix.title()}{number}",
                          f"teacher{number}.{prefix}@school.example", org)  # fmt: skip
        spec.teachers.append(teacher)
        spec.enrolments.append((klass.sourced_id, teacher.sourced_id, "teacher"))
    for number in range(1, pupils + 1):
        pupil = Pupil(
            f"{prefix}-pupil-{number}", f"Pupil{number}", f"{prefix.title()}",
            grade, date(year_of_birth, 1 + number % 12, 1 + number % 28), org,
            username=f"{prefix}.pupil{number}",
        )  # fmt: skip
        spec.pupils.append(pupil)
        klass = spec.classes[-classes + (number - 1) % classes]
        spec.enrolments.append((klass.sourced_id, pupil.sourced_id, "student"))


def trust_spec(
    *,
    schools: int = 20,
    pupils_per_school: int = 1000,
    classes_per_school: int = 60,
    enrolments_per_pupil: int = 3,
) -> RosterSpec:
    """Return a trust's roster: by default 20,000 pupils, 1,200 classes, 60,000 enrolments."""
    spec = RosterSpec(schools=[])
    for number in range(1, schools + 1):
        org, code = f"org-{number}", f"TRUST{number:02d}"
        spec.schools.append(School(org, f"Academy {number}", code))
        add_school(spec, org=org, pupils=pupils_per_school, classes=classes_per_school,
                   grade="08", year_of_birth=2013, prefix=f"s{number}")  # fmt: skip
    # Each pupil is in `enrolments_per_pupil` classes of their school in all.
    by_school: dict[str, list[Klass]] = {}
    for klass in spec.classes:
        by_school.setdefault(klass.school, []).append(klass)
    extra = []
    for index, pupil in enumerate(spec.pupils):
        classes = by_school[pupil.school]
        for step in range(1, enrolments_per_pupil):
            klass = classes[(index + step * 7) % len(classes)]
            extra.append((klass.sourced_id, pupil.sourced_id, "student"))
    spec.enrolments.extend(dict.fromkeys(extra))
    return spec


def demo_spec(*, first_names: tuple[str, ...], last_names: tuple[str, ...]) -> RosterSpec:
    """Return the demo trust's records: Oak Primary's Year 5 and two Year 8 classes at Ash."""
    spec = RosterSpec(
        schools=[
            School("org-oak", "Oak Primary", "100001"),
            School("org-ash", "Ash Academy", "100002"),
        ]
    )
    people = iter((first, last) for last in last_names for first in first_names)
    for org, grade, born, titles, size in (
        ("org-oak", "Y5", 2016, ("5 Willow",), 12),
        ("org-ash", "Y8", 2013, ("8A English", "8B English"), 12),
    ):
        for number, title in enumerate(titles, start=1):
            klass = Klass(f"{org}-class-{number}", title, org, grades=(grade,))
            spec.classes.append(klass)
            first, last = next(people)
            teacher = Teacher(
                f"{org}-teacher-{number}",
                first,
                last,
                f"{first}.{last}@{org[4:]}.example".lower(),
                org,
            )
            spec.teachers.append(teacher)
            spec.enrolments.append((klass.sourced_id, teacher.sourced_id, "teacher"))
            for place in range(1, size + 1):
                first, last = next(people)
                pupil = Pupil(
                    f"{klass.sourced_id}-pupil-{place}", first, last, grade,
                    date(born, 1 + place % 12, 1 + place % 28), org,
                    username=f"{first}.{last}.{org[4:]}".lower(),
                )  # fmt: skip
                spec.pupils.append(pupil)
                spec.enrolments.append((klass.sourced_id, pupil.sourced_id, "student"))
    return spec
