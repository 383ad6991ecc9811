"""Reading a OneRoster file set: versions 1.1 and 1.2, folders, zips and uploads, every row checked.

The files come from tests/roster_files.py, written as a management information system writes
them; a test then spoils one line as exporters and copies do, and reads what the school admin
would be told: the file, the line and why, while every good row is still read.
"""

import csv
import io
import zipfile
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from roster.reading import read_roster
from roster.records import ABSENT, ACTIVE, BULK, DELTA, TO_BE_DELETED, RosterUnreadable
from tests.roster_files import Pupil, roster_write, school_spec

PUPILS = 6


def people_as_read(found) -> dict:
    """Return what a roster says of each person, whatever its version."""
    return {
        person.sourced_id: (
            person.role,
            person.given_name,
            person.family_name,
            person.username,
            person.org_ids,
            person.grades,
            person.birth_date,
            person.status,
        )
        for person in found.people.values()
    }


def rows_of(folder: Path, name: str) -> list[list[str]]:
    with (folder / name).open(encoding="utf-8-sig", newline="") as file:
        return list(csv.reader(file))


def write_rows(folder: Path, name: str, rows: list[list[str]], *, ending: str = "\r\n") -> None:
    out = io.StringIO()
    csv.writer(out, lineterminator=ending).writerows(rows)
    (folder / name).write_text(out.getvalue(), encoding="utf-8", newline="")


def edit(folder: Path, name: str, sourced_id: str, **changes: str) -> int:
    """Change columns of the row with this sourcedId; return its line (the header is 1)."""
    rows = rows_of(folder, name)
    header = rows[0]
    for number, row in enumerate(rows[1:], start=2):
        if row[0] == sourced_id:
            for column, value in changes.items():
                row[header.index(column)] = value
            write_rows(folder, name, rows)
            return number
    raise AssertionError(f"{sourced_id} is not in {name}")


def problem_lines(found, file: str) -> dict[int, str]:
    return {problem.line: problem.reason for problem in found.problems if problem.file == file}


@pytest.fixture
def folder(tmp_path) -> Path:
    return roster_write(school_spec(pupils=PUPILS, classes=2), tmp_path / "roster")


def test_it_reads_a_1_1_folder_into_people_classes_and_enrolments(folder):
    found = read_roster(folder)

    assert found.version == "1.1"
    assert found.problems == []
    assert found.mode("users") == BULK and found.mode("roles") == ABSENT
    pupil = found.people["org-1-pupil-1"]
    assert (pupil.role, pupil.given_name, pupil.username) == ("student", "Pupil1", "org-1.pupil1")
    assert pupil.org_ids == ("org-1",) and pupil.grades == ("07",)
    assert pupil.birth_date == date(2014, 2, 2) and pupil.enabled
    assert pupil.date_last_modified == datetime(2026, 9, 1, 8, tzinfo=UTC)
    assert found.people["org-1-teacher-1"].role == "teacher"
    assert len(found.people) == PUPILS + 2
    assert found.orgs["org-1"].identifier == "SCHOOL"
    assert found.sessions["term-2026"].school_year == "2027"
    klass = found.classes["org-1-class-1"]
    assert (klass.title, klass.org_id, klass.term_ids) == ("07A", "org-1", ("term-2026",))
    assert len(found.enrolments) == PUPILS + 2
    assert {e.role for e in found.enrolments} == {"student", "teacher"}


def test_a_1_2_zip_reads_the_same_people_as_1_1(tmp_path, folder):
    zipped = roster_write(
        school_spec(pupils=PUPILS, classes=2), tmp_path / "r-1.2", version="1.2", as_zip=True
    )

    found = read_roster(zipped)

    assert found.version == "1.2" and found.mode("roles") == BULK
    assert found.problems == []
    assert people_as_read(found) == people_as_read(read_roster(folder))
    assert len(found.enrolments) == PUPILS + 2 and len(found.classes) == 2


def test_an_uploaded_zip_reads_as_the_same_zip_on_disk(tmp_path):
    zipped = roster_write(
        school_spec(pupils=PUPILS), tmp_path / "roster", version="1.2", as_zip=True
    )
    upload = SimpleUploadedFile("roster.zip", zipped.read_bytes(), "application/zip")

    found = read_roster(upload, max_bytes=10_000_000)

    assert people_as_read(found) == people_as_read(read_roster(zipped))
    assert len(found.people) == PUPILS + 2


def test_bad_rows_are_problems_with_file_line_and_reason_while_good_rows_are_read(folder):
    birth = edit(folder, "demographics.csv", "org-1-pupil-2", birthDate="2014-13-01")
    enabled = edit(folder, "users.csv", "org-1-pupil-3", enabledUser="maybe")
    stamp = edit(folder, "users.csv", "org-1-pupil-4", dateLastModified="yesterday")
    status = edit(folder, "users.csv", "org-1-pupil-5", status="gone")
    lost = edit(
        folder, "enrollments.csv", "enr-org-1-class-1-org-1-pupil-1", classSourcedId="no-such-class"
    )
    rows = rows_of(folder, "users.csv")
    write_rows(folder, "users.csv", [*rows, rows[PUPILS + 1]])  # teacher 1 again, last

    found = read_roster(folder)

    assert problem_lines(found, "demographics.csv") == {
        birth: "birthDate '2014-13-01' is not a date (YYYY-MM-DD)."
    }
    users = problem_lines(found, "users.csv")
    assert users[enabled].endswith("enabledUser 'maybe' is neither true nor false.")
    assert "dateLastModified 'yesterday' is not a date and time" in users[stamp]
    assert users[status].endswith("status 'gone' is neither active nor tobedeleted.")
    assert users[len(rows) + 1].endswith(
        f"sourcedId 'org-1-teacher-1' is given again (first on line {PUPILS + 2})."
    )
    assert problem_lines(found, "enrollments.csv")[lost].endswith(
        "classSourcedId 'no-such-class' is not in classes.csv."
    )
    # The enrolments of pupils whose rows are bad name rows that could not be read.
    assert any("could not be read" in p.reason for p in found.problems if p.sourced_id)
    assert {"org-1-pupil-1", "org-1-pupil-2", "org-1-pupil-6"} <= found.people.keys()
    # The first row of a duplicated id stands: its enrolments are read.
    assert "org-1-teacher-1" in found.people
    assert not any("'org-1-teacher-1'" in p.reason for p in found.problems if p.line < len(rows))
    assert "org-1-pupil-3" not in found.people
    assert found.people["org-1-pupil-2"].birth_date is None  # its demographics row was bad
    assert next(p for p in found.problems if p.line == enabled).sourced_id == "org-1-pupil-3"


def test_a_pupil_without_a_birth_date_is_read_with_none(folder):
    edit(folder, "demographics.csv", "org-1-pupil-1", birthDate="")

    found = read_roster(folder)

    assert found.problems == []
    assert found.people["org-1-pupil-1"].birth_date is None
    assert found.people["org-1-pupil-2"].birth_date == date(2014, 3, 3)


def test_a_roster_without_a_manifest_is_unreadable(folder):
    (folder / "manifest.csv").unlink()

    with pytest.raises(RosterUnreadable, match="no manifest.csv"):
        read_roster(folder)


def test_a_file_that_is_neither_zip_nor_folder_is_unreadable(tmp_path):
    path = tmp_path / "users.csv"
    path.write_text("sourcedId\r\n")
    upload = SimpleUploadedFile("roster.zip", b"not a zip at all")

    with pytest.raises(RosterUnreadable, match="neither a zip nor a folder"):
        read_roster(path)
    with pytest.raises(RosterUnreadable, match="not a zip"):
        read_roster(upload)


def test_a_zip_naming_an_entry_outside_the_set_is_refused(tmp_path, folder):
    zipped = tmp_path / "roster.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        for path in folder.iterdir():
            archive.write(path, path.name)
        archive.writestr("../../outside.csv", "sourcedId\r\n")

    with pytest.raises(RosterUnreadable, match="points outside the roster's folder"):
        read_roster(zipped)
    assert not (tmp_path.parent / "outside.csv").exists()


def test_a_zip_bigger_than_the_limit_or_unzipping_past_it_is_refused(tmp_path, folder):
    zipped = roster_write(school_spec(pupils=PUPILS), tmp_path / "roster", as_zip=True)
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in folder.iterdir():
            archive.write(path, path.name)
        archive.writestr("padding.csv", b"\0" * 5_000_000)

    with pytest.raises(RosterUnreadable, match="the most this portal reads is"):
        read_roster(zipped, max_bytes=1000)
    assert bomb.stat().st_size < 100_000
    with pytest.raises(RosterUnreadable, match="once unzipped"):
        read_roster(bomb, max_bytes=1_000_000)


def test_a_folder_zipped_whole_is_read_from_its_folder(tmp_path, folder):
    zipped = tmp_path / "roster.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        for path in folder.iterdir():
            archive.write(path, f"export/{path.name}")

    assert len(read_roster(zipped).people) == PUPILS + 2


def test_an_empty_bulk_file_is_named_and_an_empty_delta_is_not(tmp_path):
    spec = school_spec(pupils=PUPILS)
    spec.modes = {"enrollments": "delta"}
    folder = roster_write(spec, tmp_path / "roster")
    write_rows(folder, "users.csv", rows_of(folder, "users.csv")[:1])
    write_rows(folder, "enrollments.csv", rows_of(folder, "enrollments.csv")[:1])
    (folder / "demographics.csv").write_bytes(b"")

    found = read_roster(folder)

    assert found.empty_files == ["users.csv", "demographics.csv"]
    assert found.people == {} and found.enrolments == []
    assert found.truncated_files == []


def test_a_cut_off_file_is_named_truncated_and_its_good_rows_read(folder):
    text = (folder / "enrollments.csv").read_bytes()
    (folder / "enrollments.csv").write_bytes(text[:-20])  # the last row loses its end
    last = text.count(b"\n")

    found = read_roster(folder)

    assert found.truncated_files == ["enrollments.csv"]
    cut = next(p for p in found.problems if p.line == last)
    assert "values where the header has 10" in cut.reason
    assert cut.sourced_id.startswith("enr-")  # what is left of the row still says whose
    assert len(found.enrolments) == PUPILS + 1


def test_a_file_ending_inside_an_open_quote_is_truncated(folder):
    with (folder / "users.csv").open("ab") as file:
        file.write(b'late-pupil,active,2026-09-01T08:00:00.000Z,true,org-1,student,"late')

    found = read_roster(folder)

    assert found.truncated_files == ["users.csv"]
    assert "never closed" in problem_lines(found, "users.csv")[PUPILS + 4]
    assert len(found.people) == PUPILS + 2


def test_a_delta_may_name_rows_the_portal_holds_and_marks_leavers(tmp_path):
    spec = school_spec(pupils=PUPILS)
    spec.pupils[0] = Pupil(**{**spec.pupils[0].__dict__, "status": "tobedeleted"})
    spec.enrolments.append(("org-1-class-1", "known-to-the-portal", "student", "active"))
    spec.modes = {name: "delta" for name in ("users", "enrollments", "demographics")}
    spec.modes |= {"orgs": "absent", "courses": "absent"}
    folder = roster_write(spec, tmp_path / "roster")
    write_rows(folder, "courses.csv", [["sourcedId", "title"], ["ignored", "Absent"]])

    found = read_roster(folder)

    assert found.problems == []
    assert found.modes["users"] == DELTA and found.mode("courses") == ABSENT
    assert found.people["org-1-pupil-1"].status == TO_BE_DELETED
    assert found.people["org-1-pupil-2"].status == ACTIVE
    assert found.courses == {}
    assert any(e.person_id == "known-to-the-portal" for e in found.enrolments)


def test_a_file_the_manifest_gives_but_the_set_lacks_is_a_problem_and_absent(folder):
    (folder / "classes.csv").unlink()

    found = read_roster(folder)

    assert found.mode("classes") == ABSENT
    assert problem_lines(found, "classes.csv") == {
        0: "the manifest gives it as bulk, but the roster has no such file, so it "
        "is read as absent."
    }
    assert len(found.enrolments) == PUPILS + 2  # no classes to check them against


def test_a_bom_lf_endings_header_case_and_extra_columns_are_read(folder):
    for path in folder.iterdir():
        rows = rows_of(folder, path.name)
        header = [name.lower() for name in rows[0]] + ["exporterNote"]
        write_rows(folder, path.name, [header, *(row + ["x"] for row in rows[1:])], ending="\n")
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())

    found = read_roster(folder)

    assert found.problems == []
    assert found.people["org-1-pupil-1"].birth_date == date(2014, 2, 2)
    assert len(found.people) == PUPILS + 2 and len(found.enrolments) == PUPILS + 2


def test_nul_bytes_text_not_utf8_and_stray_quotes_are_problems_of_their_lines(folder):
    line = edit(folder, "users.csv", "org-1-pupil-2", givenName="Zo\0e")
    text = (folder / "users.csv").read_bytes().replace(b"Pupil3", b"Ren\xe9e")
    (folder / "users.csv").write_bytes(text.replace(b",Pupil4,", b',"Pupil"4,'))

    found = read_roster(folder)

    users = problem_lines(found, "users.csv")
    assert "NUL character" in users[line]
    assert next(p for p in found.problems if p.line == line).sourced_id == "org-1-pupil-2"
    assert "not UTF-8" in users[line + 1]
    assert "quote marks" in users[line + 2]
    assert len(found.people) == PUPILS - 1


def test_a_header_without_a_needed_column_is_a_problem_and_the_file_absent(folder):
    rows = rows_of(folder, "users.csv")
    gone = rows[0].index("givenName")
    write_rows(folder, "users.csv", [row[:gone] + row[gone + 1 :] for row in rows])

    found = read_roster(folder)

    assert found.mode("users") == ABSENT and found.people == {}
    assert problem_lines(found, "users.csv") == {
        1: "its header has no givenName column, so none of its rows can be read."
    }


def test_only_versions_1_1_and_1_2_are_read(folder):
    rows = rows_of(folder, "manifest.csv")
    version = next(row for row in rows if row[0] == "oneroster.version")
    for given, read in (("1.2.0", "1.2"), ("1.1", "1.1")):
        version[1] = given
        write_rows(folder, "manifest.csv", rows)
        assert read_roster(folder).version == read
    version[1] = "1.0"
    write_rows(folder, "manifest.csv", rows)

    with pytest.raises(RosterUnreadable, match="reads versions 1.1 and 1.2"):
        read_roster(folder)


def test_a_1_2_users_file_with_a_role_column_and_no_roles_file_is_read(tmp_path):
    folder = roster_write(school_spec(pupils=PUPILS), tmp_path / "roster", version="1.2")
    roles = {row[3]: row[5] for row in rows_of(folder, "roles.csv")[1:]}
    (folder / "roles.csv").unlink()
    rows = rows_of(folder, "manifest.csv")
    write_rows(folder, "manifest.csv", [row for row in rows if row[0] != "file.roles"])
    users = rows_of(folder, "users.csv")
    write_rows(
        folder, "users.csv", [users[0] + ["role"], *(row + [roles[row[0]]] for row in users[1:])]
    )

    found = read_roster(folder)

    assert found.problems == []
    assert found.people["org-1-pupil-1"].role == "student"
    assert found.people["org-1-teacher-1"].role == "teacher"


def test_a_1_1_inactive_user_is_to_be_deleted(folder):
    edit(folder, "users.csv", "org-1-pupil-1", status="inactive")

    assert read_roster(folder).people["org-1-pupil-1"].status == TO_BE_DELETED


def test_1_2_roles_must_name_users_and_users_must_have_a_role(tmp_path):
    folder = roster_write(school_spec(pupils=PUPILS), tmp_path / "roster", version="1.2")
    roles = rows_of(folder, "roles.csv")
    stray = [*roles[1][:3], "nobody", *roles[1][4:]]
    write_rows(folder, "roles.csv", [row for row in roles if row[3] != "org-1-pupil-1"] + [stray])

    found = read_roster(folder)

    users = problem_lines(found, "users.csv")
    assert users == {2: "roles.csv gives this user no role."}
    assert problem_lines(found, "roles.csv") == {
        len(roles): "userSourcedId 'nobody' is not in users.csv."
    }
    assert "org-1-pupil-1" not in found.people and "org-1-pupil-2" in found.people


def test_a_file_saved_as_utf16_is_a_problem_and_read_as_absent(folder):
    text = (folder / "demographics.csv").read_text(encoding="utf-8")
    (folder / "demographics.csv").write_bytes(text.encode("utf-16"))

    found = read_roster(folder)

    assert found.mode("demographics") == ABSENT
    assert "UTF-16" in problem_lines(found, "demographics.csv")[0]
    assert found.people["org-1-pupil-1"].birth_date is None and len(found.people) == PUPILS + 2
