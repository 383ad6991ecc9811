"""The list of imports: every file uploaded lately, who by, when, how many rows, how it went."""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone, translation
from django.utils.formats import date_format

from accounts.models import StaffRole
from imports.models import ImportJob, ImportRow
from imports.services import import_job_create_from_csv, import_job_discard
from tests.factories import HEADER, good_rows, make_staff, mid_way, upload_file
from tests.journeys import page_showing


def uploaded(user, name: str, text: str, *, minutes_ago: int) -> ImportJob:
    """Check a file as `user` uploaded it `minutes_ago`."""
    job = import_job_create_from_csv(file=upload_file(text, name), created_by=user)
    created = timezone.now() - timedelta(minutes=minutes_ago)
    ImportJob.objects.filter(pk=job.pk).update(created_at=created)
    return job


def listed_rows(page: str) -> list[str]:
    """The body rows of the list's table, as text without markup."""
    body = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [" ".join(re.sub(r"<[^>]+>", " ", row).split()) for row in body.split("</tr>")[:-1]]


def test_the_learner_list_links_to_the_imports_for_those_who_may_import(staff_client):
    page = staff_client.get("/learners/").content.decode()
    assert 'href="/learners/imports/"' in page


def test_a_teacher_neither_sees_the_link_nor_reaches_the_list(db):
    teacher = Client()
    teacher.force_login(make_staff("tara.teacher", role=StaffRole.TEACHER))

    learners = page_showing(teacher, "/learners/", "<h1>Learners</h1>")
    assert 'href="/learners/imports/"' not in learners
    assert teacher.get("/learners/imports/").status_code == 404


@pytest.mark.backend  # list query
def test_each_import_says_who_when_how_many_rows_and_how_it_went_newest_first(staff_client, staff):
    ada = make_staff("ada.admin", role=StaffRole.ADMIN)
    ada.first_name, ada.last_name = "Ada", "Admin"
    ada.save()
    bad_row = "bad name!,,2010-01-01,,,,\n"
    finished = uploaded(ada, "year7.csv", HEADER + "\n" + good_rows(3) + bad_row, minutes_ago=40)
    first, second, third = finished.rows.exclude(state="invalid").values_list("pk", flat=True)
    ImportRow.objects.filter(pk__in=[first, second]).update(
        state="registered", signin_ready_at=timezone.now()
    )
    ImportRow.objects.filter(pk=third).update(state="failed", reason="The service said no.")
    ImportJob.objects.filter(pk=finished.pk).update(state=ImportJob.State.FINISHED)
    discarded = uploaded(staff, "typo.csv", HEADER + "\n" + good_rows(1), minutes_ago=30)
    import_job_discard(job=discarded)
    running = uploaded(staff, "year8.csv", HEADER + "\n" + good_rows(10), minutes_ago=20)
    mid_way(running)
    preview = uploaded(staff, "year9.csv", HEADER + "\n" + good_rows(2) + bad_row, minutes_ago=10)

    page = staff_client.get("/learners/imports/").content.decode()

    rows = listed_rows(page)
    newest_first = [preview, running, discarded, finished]
    assert [row.split(")")[0] + ")" for row in rows] == [
        f"Import {job.pk} ({job.filename})" for job in newest_first
    ]
    assert rows[0].endswith(" 3 Checked, not confirmed: 2 can be registered, 1 with problems")
    assert "(year9.csv) sam.staff " in rows[0]
    assert rows[1].endswith(" 10 Registering: 5 of 10 learners done (1 failed)")
    assert rows[2].endswith(" 1 Discarded: nobody was registered")
    assert "(year7.csv) Ada Admin " in rows[3]
    assert rows[3].endswith(" 4 Finished: 2 registered, 1 failed, 1 skipped as invalid")
    for job in newest_first:
        assert f'href="/learners/import/{job.pk}/"' in page
    finished.refresh_from_db()
    with translation.override("en-gb"):
        when = date_format(timezone.localtime(finished.created_at), "SHORT_DATETIME_FORMAT")
    assert f" {when} " in rows[3]


@pytest.mark.backend  # list query
def test_the_list_comes_in_pages_of_25(staff_client, staff):
    now = timezone.now()
    ImportJob.objects.bulk_create(
        ImportJob(
            filename=f"file{n:02d}.csv",
            created_by=staff,
            created_at=now - timedelta(minutes=n),
            state=ImportJob.State.DISCARDED,
        )
        for n in range(30)
    )

    first = staff_client.get("/learners/imports/").content.decode()
    second = staff_client.get("/learners/imports/?page=2").content.decode()

    def files(page: str) -> list[str]:
        return [re.search(r"\((file\d+\.csv)\)", row).group(1) for row in listed_rows(page)]

    assert files(first) == [f"file{n:02d}.csv" for n in range(25)]
    assert "Page 1 of 2" in first and 'href="?page=2"' in first
    assert files(second) == [f"file{n:02d}.csv" for n in range(25, 30)]


@pytest.mark.backend  # list query
def test_the_list_counts_every_jobs_rows_in_one_query(
    staff_client, staff, django_assert_max_num_queries
):
    for n in range(3):
        uploaded(staff, f"file{n}.csv", HEADER + "\n" + good_rows(2), minutes_ago=n)
    # (The schools and the member of staff's school roles are two of them.)
    with django_assert_max_num_queries(14) as few:
        staff_client.get("/learners/imports/")
    for n in range(3, 12):
        uploaded(staff, f"file{n}.csv", HEADER + "\n" + good_rows(2), minutes_ago=n)

    with django_assert_max_num_queries(len(few.captured_queries)):
        staff_client.get("/learners/imports/")


def test_the_progress_page_leads_back_to_the_list(staff_client, staff):
    running = uploaded(staff, "year8.csv", HEADER + "\n" + good_rows(10), minutes_ago=1)
    mid_way(running)

    page = staff_client.get(f"/learners/import/{running.pk}/").content.decode()

    assert 'href="/learners/imports/"' in page
