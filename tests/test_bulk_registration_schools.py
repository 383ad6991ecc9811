"""Bulk registration for a trust: each row of the file goes to the school its `school` names."""

import csv
import io

import pytest
from django.contrib.auth.models import User
from django.test import Client

from accounts.models import StaffRole
from accounts.services import staff_role_set
from classes.models import SchoolGroup
from imports.models import ImportJob, ImportRow
from learners.models import Learner, Level
from schools.context import working_in
from schools.models import School
from tests.factories import GOOD_PASSWORD, HEADER, make_staff, upload_file

ROW = "{name},{password},2010-01-02,,Pat,Lee,LOA_PARTNER_LEVEL2,{group},{school}"


@pytest.fixture
def schools(db) -> tuple[School, School, School]:
    """The migration's school as Oak Primary, Ash Academy and Elm College beside it."""
    School.objects.filter(code="SCHOOL").update(name="Oak Primary")
    ash = School.objects.create(code="100002", name="Ash Academy")
    elm = School.objects.create(code="100003", name="Elm College")
    return School.objects.get(code="SCHOOL"), ash, elm


@pytest.fixture
def dsl_of_two(schools) -> User:
    """A safeguarding lead in Oak Primary and Ash Academy, not in Elm College."""
    oak, ash, _elm = schools
    user = make_staff("dee.dsl", school=oak)
    staff_role_set(user=user, role=StaffRole.DSL, school_id=ash.pk)
    return user


def signed_in(user: User, school: School | None = None) -> Client:
    client = Client()
    client.force_login(user)
    if school is not None:
        assert client.post("/schools/choose/", {"school": school.pk}).status_code == 302
    return client


def file_of(*rows: str) -> str:
    return HEADER + ",class,school\n" + "\n".join(rows) + "\n"


def row(name: str, school: str = "", group: str = "", password: str = GOOD_PASSWORD) -> str:
    return ROW.format(name=name, password=password, group=group, school=school)


def upload(client: Client, text: str):
    response = client.post("/learners/import/", {"file": upload_file(text)})
    assert response.status_code == 302, response.content.decode()[:2000]
    return ImportJob.objects.get(pk=int(response["Location"].rstrip("/").split("/")[-1]))


def csv_rows(response) -> list[list[str]]:
    body = b"".join(response.streaming_content).decode("utf-8-sig")
    return list(csv.reader(io.StringIO(body)))


# The template and the upload page --------------------------------------------------------------


def test_with_several_schools_the_template_has_a_school_column(dsl_of_two, schools):
    _oak, ash, _elm = schools

    rows = csv_rows(signed_in(dsl_of_two, ash).get("/learners/import/template.csv"))

    assert rows[0] == [*HEADER.split(","), "class", "school"]
    assert len(rows) == 2 and rows[1][8] == "100002"  # the school worked in


def test_with_one_school_neither_template_nor_page_names_schools(staff_client):
    rows = csv_rows(staff_client.get("/learners/import/template.csv"))
    page = staff_client.get("/learners/import/").content.decode()

    assert rows[0] == [*HEADER.split(","), "class"]
    assert "What goes in each column" in page and "<code>school</code>" not in page


def test_the_upload_page_explains_the_school_column(dsl_of_two, schools):
    oak, _ash, _elm = schools

    page = signed_in(dsl_of_two, oak).get("/learners/import/").content.decode()

    assert "<code>school</code>" in page
    assert "SCHOOL, 100002. Leave it empty for Oak Primary" in page
    assert "100003" not in page  # not a school of theirs


# Checking the file -----------------------------------------------------------------------------


def test_each_row_goes_to_the_school_it_names_or_to_the_one_worked_in(dsl_of_two, schools):
    oak, ash, _elm = schools
    client = signed_in(dsl_of_two, oak)

    job = upload(
        client,
        file_of(row("amy.ash", "100002"), row("ola.oak"), row("ana.ash", " 100002 "),
                row("omar.oak", "school")),
    )  # fmt: skip

    assert job.school == oak and (job.valid_rows, job.invalid_rows) == (4, 0)
    by_name = {row.username: row.school for row in job.rows.all()}
    assert by_name == {"amy.ash": ash, "ola.oak": oak, "ana.ash": ash, "omar.oak": oak}
    page = client.get(f"/learners/import/{job.pk}/").content.decode()
    assert "Register 4 learners" in page
    assert "<li>Ash Academy: 2</li>" in page and "<li>Oak Primary: 2</li>" in page


def test_an_unknown_school_or_one_the_uploader_does_not_work_in_is_a_problem_row(
    dsl_of_two, schools
):
    oak, _ash, _elm = schools
    client = signed_in(dsl_of_two, oak)

    job = upload(client, file_of(row("fine.one"), row("uno.known", "999999"),
                                 row("elm.pupil", "100003")))  # fmt: skip

    assert (job.valid_rows, job.invalid_rows) == (1, 2)
    problems = {row.username: " ".join(row.problems) for row in job.rows.all()}
    assert problems["uno.known"] == (
        "school: There is no school with the code \u201c999999\u201d. The schools' codes are: "
        "100002, 100003, SCHOOL."
    )
    assert problems["elm.pupil"] == (
        "school: You do not work in Elm College (100003), so you cannot register its "
        "learners: ask a member of its staff to."
    )
    page = client.get(f"/learners/import/{job.pk}/").content.decode()
    assert "Register 1 learner" in page and "You do not work in Elm College" in page


def test_a_trust_admin_registers_into_any_school(schools):
    oak, _ash, elm = schools
    trust_admin = make_staff("tess.trust", role=StaffRole.TRUST_ADMIN)

    job = upload(signed_in(trust_admin, oak), file_of(row("elm.pupil", "100003")))

    assert job.valid_rows == 1 and job.rows.get().school == elm


def test_a_rows_class_is_looked_up_in_its_school(dsl_of_two, schools):
    oak, ash, elm = schools
    groups = {}
    for school in schools:
        with working_in(school.pk):
            groups[school.code] = SchoolGroup.objects.create(name="7B", level=Level.SECONDARY)
    with working_in(oak.pk):
        SchoolGroup.objects.create(name="Oak only", level=Level.SECONDARY)

    job = upload(
        signed_in(dsl_of_two, oak),
        file_of(row("amy.ash", "100002", "7b"), row("ola.oak", "", "7B"),
                row("ann.ash", "100002", "Oak only")),
    )  # fmt: skip

    rows = {row.username: row for row in job.rows.all()}
    assert rows["amy.ash"].group_ids == [groups["100002"].pk]
    assert rows["ola.oak"].group_ids == [groups["SCHOOL"].pk]
    assert rows["ann.ash"].state == ImportRow.State.INVALID
    assert "There is no group called \u201cOak only\u201d" in rows["ann.ash"].problems[0]


def test_with_one_school_an_empty_school_column_is_ignored(staff_client):
    job = upload(staff_client, file_of(row("ola.oak"), row("omar.oak", "SCHOOL")))

    assert (job.valid_rows, job.invalid_rows) == (2, 0)
    assert {row.school for row in job.rows.all()} == {School.objects.get()}


# Registering -----------------------------------------------------------------------------------


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_confirming_registers_each_learner_into_their_school_and_class(upstream, db):
    School.objects.filter(code="SCHOOL").update(name="Oak Primary")
    oak = School.objects.get(code="SCHOOL")
    ash = School.objects.create(code="100002", name="Ash Academy")
    dee = make_staff("dee.dsl", school=oak)
    staff_role_set(user=dee, role=StaffRole.DSL, school_id=ash.pk)
    with working_in(ash.pk):
        ash_7b = SchoolGroup.objects.create(name="7B", level=Level.SECONDARY)
    client = signed_in(dee, oak)
    job = upload(client, file_of(row("amy.ash", "100002", "7B"), row("ola.oak")))

    client.post(f"/learners/import/{job.pk}/confirm/")

    job.refresh_from_db()
    assert job.state == ImportJob.State.FINISHED and job.school == oak
    amy, ola = Learner.objects.get(username="amy.ash"), Learner.objects.get(username="ola.oak")
    assert amy.status == ola.status == Learner.Status.ACTIVE
    assert (amy.school, ola.school) == (ash, oak)
    assert list(amy.group_memberships.values_list("group", flat=True)) == [ash_7b.pk]
    assert Client().login(username="amy.ash", password=GOOD_PASSWORD)
    # Ash Academy's learner list shows her; Oak Primary's does not.
    in_ash = signed_in(dee, ash).get("/learners/").content.decode()
    in_oak = signed_in(dee, oak).get("/learners/").content.decode()
    assert "amy.ash" in in_ash and "ola.oak" not in in_ash
    assert "ola.oak" in in_oak and "amy.ash" not in in_oak


def test_a_teacher_elsewhere_cannot_fill_that_school_through_another_schools_file(schools):
    oak, ash, _elm = schools
    # Oak's DSL, only a teacher at Ash: bulk registration is not a teacher's job there.
    dee = make_staff("dee.dsl", school=oak)
    staff_role_set(user=dee, role=StaffRole.TEACHER, school_id=ash.pk)
    client = signed_in(dee, oak)

    job = upload(client, file_of(row("oak.pupil"), row("ash.pupil", "100002")))

    assert (job.valid_rows, job.invalid_rows) == (1, 1)
    problem = " ".join(job.rows.get(username="ash.pupil").problems)
    assert "You do not work in Ash Academy" in problem


def test_a_forged_preview_of_another_school_is_not_discarded(dsl_of_two, schools):
    oak, ash, _elm = schools
    elm_admin = make_staff("eli.admin", role=StaffRole.ADMIN, school=schools[2])
    elm_job = upload(signed_in(elm_admin), file_of(row("elm.pupil")))
    client = signed_in(dsl_of_two, oak)

    response = client.post(
        "/learners/import/",
        {"file": upload_file(file_of(row("oak.pupil"))), "replaces": elm_job.pk},
    )

    assert response.status_code == 302
    elm_job.refresh_from_db()
    assert elm_job.state == ImportJob.State.PREVIEW
