"""Bulk registration from a CSV file: check, preview, confirm, progress, outcome, credentials."""

import csv
import io
import sys
import time
import tracemalloc
from collections.abc import Callable
from datetime import date, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.utils import timezone

import imports.services
from accounts.usernames import username_normal_form
from audit.models import AuditEvent
from imports.models import ImportJob, ImportRow
from imports.passwords import password_decrypt, password_encrypt
from imports.rows import OUTCOME_UNKNOWN
from imports.services import import_job_confirm, import_job_create_from_csv
from imports.tasks import register_import_row, run_import_job
from learners.models import Learner, Level
from learners.registration import registration_failure
from partner_api import (
    PartnerApiClient,
    PartnerApiServerError,
    PartnerApiUnavailable,
    get_client,
)
from tests.browsing import browser_sign_in
from tests.factories import GOOD_PASSWORD, HEADER, good_rows, mid_way, upload_file
from tests.workers import RunningWorker, db_worker_running, run_db_worker

DATABASE_TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default", "imports", "media"],
    }
}
WORKER_TIMEOUT = 180  # seconds: the machine may be loaded


def checked_file(staff, count: int) -> ImportJob:
    """Check a file of `count` good rows, as the upload page does."""
    return import_job_create_from_csv(
        file=upload_file(HEADER + "\n" + good_rows(count)), created_by=staff
    )


def upload(client: Client, text: str, **kwargs):
    return client.post("/learners/import/", {"file": upload_file(text, **kwargs)})


def job_of(response) -> ImportJob:
    assert response.status_code == 302, response.content.decode()[:2000]
    return ImportJob.objects.get(pk=int(response["Location"].rstrip("/").split("/")[-1]))


def csv_rows(response) -> list[list[str]]:
    body = b"".join(response.streaming_content).decode("utf-8-sig")
    return list(csv.reader(io.StringIO(body)))


def creations(upstream) -> int:
    return upstream.state.count(endpoint="create-learner")


def wait_for(condition: Callable[[], bool], worker: RunningWorker, what: str) -> None:
    """Wait until the condition holds, failing with the worker's output past a generous limit."""
    deadline = time.monotonic() + WORKER_TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"{what}, in time\n{worker.output()}"
        time.sleep(0.2)


def every_text_in_the_database() -> str:
    """Dump every text cell of every table, to look for a password in plain text."""
    cells = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f'SELECT * FROM "{table}"')  # noqa: S608 (names from introspection)
            for row in cursor.fetchall():
                cells.extend(str(cell) for cell in row if cell is not None)
    return "\n".join(cells)


# The template and the upload page --------------------------------------------------------------


def test_the_template_names_the_spec_fields_and_gives_one_example(staff_client):
    response = staff_client.get("/learners/import/template.csv")

    assert response["Content-Type"] == "text/csv; charset=utf-8"
    rows = csv_rows(response)
    assert rows[0] == [*HEADER.split(","), "class"]  # class: optional, groups separated by ;
    assert len(rows) == 2
    assert rows[1][0] and rows[1][2] == "2009-03-27" and rows[1][6] == "LOA_PARTNER_LEVEL2"


def test_the_learner_list_links_to_the_upload_page(staff_client):
    page = staff_client.get("/learners/").content.decode()
    assert 'href="/learners/import/"' in page
    assert "Register many learners from a file" in page


def test_the_upload_page_labels_its_field_and_links_the_template(staff_client):
    page = staff_client.get("/learners/import/").content.decode()
    assert '<label for="id_file">' in page
    assert 'href="/learners/import/template.csv"' in page
    assert 'enctype="multipart/form-data"' in page


def test_a_learner_cannot_reach_the_import_pages(learner_client, staff, db):
    job = checked_file(staff, 1)
    assert learner_client.get("/learners/import/").status_code == 404
    assert learner_client.get(f"/learners/import/{job.pk}/").status_code == 404
    assert learner_client.get(f"/learners/import/{job.pk}/results.csv").status_code == 404


# Checking the file -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "The file is empty"),
        (b"\n\n", "no header row"),
        (HEADER.encode() + b"\n", "no learners under it"),
        (b"PK\x03\x04\x14\x00\x00\x00\x08\x00\xff\xfe\x00\x00binary", "could not be read as CSV"),
        (b"username,dob\n\xff\xfe\x80,2010-01-01\n", "not a CSV text file"),
        (b"username,dob\n\x00\x01\x02,2010-01-01\n", "could not be read as CSV"),
        ("username,dob\nJos\u00e9,2010-01-01\n".encode("latin-1"), "not a CSV text file in UTF-8"),
        (b"username,password,email\nann,x,a@b.c\n", "lacks the column dob"),
        (b"name,dob\nann,2010-01-01\n", "unknown column \u201cname\u201d"),
        (b"username,dob,dob\nann,2010-01-01,2010-01-01\n", "the column dob more than once"),
        # Past the first 8 KB, which are sniffed for a binary file's NUL bytes.
        (
            (HEADER + "\n" + good_rows(200) + "late.nul,,2010-01-01,,An\x00n,,\n").encode(),
            "Row 202 holds a null character (a zero byte)",
        ),
        (
            (HEADER + "\n" + good_rows(2) + "long.cell,,2010-01-01,,," + "x" * 140_000).encode(),
            "Row 4 has a cell longer than 131,072 characters",
        ),
        (
            (HEADER + '\nopen.quote,,2010-01-01,,"Ann,,\n' + good_rows(3000)).encode(),
            "Row 2 has a cell longer than 131,072 characters",
        ),
    ],
)
def test_a_file_that_cannot_be_used_gets_a_clear_message(staff_client, content, message):
    response = staff_client.post(
        "/learners/import/", {"file": SimpleUploadedFile("f.csv", content, "text/csv")}
    )

    assert response.status_code == 200
    page = response.content.decode()
    assert message in page, page
    assert 'class="error-summary"' in page
    assert not ImportJob.objects.exists()


def test_a_file_with_too_many_rows_is_refused_whole(staff_client, settings):
    settings.IMPORT_MAX_ROWS = 5
    page = upload(staff_client, HEADER + "\n" + good_rows(6)).content.decode()
    assert "more than 5 learners" in page
    assert not ImportJob.objects.exists() and not ImportRow.objects.exists()


def test_a_file_too_large_is_refused(staff_client, settings):
    settings.IMPORT_MAX_FILE_BYTES = 100
    page = upload(staff_client, HEADER + "\n" + good_rows(5)).content.decode()
    assert "The file is too large" in page
    assert not ImportJob.objects.exists()


def test_no_file_chosen_is_a_clear_error(staff_client):
    page = staff_client.post("/learners/import/", {}).content.decode()
    assert "Choose a CSV file to upload." in page


def test_the_preview_lists_each_kind_of_bad_row_with_every_problem(staff_client, learner):
    rows = [
        "fine.one,plum-kettle-river-42,2010-01-02,,,,",  # row 2: good
        "bad name!,plum-kettle-river-42,2010-01-02,,,,",  # 3: username characters
        ",plum-kettle-river-42,2010-01-02,,,,",  # 4: no username
        "dob.format,plum-kettle-river-42,31/02/2010,,,,",  # 5: no such date
        "dob.future,plum-kettle-river-42,2999-01-01,,,,",  # 6: dob in the future
        "dob.old,plum-kettle-river-42,1850-01-01,,,,",  # 7: implausibly old
        "level.bad,plum-kettle-river-42,2010-01-02,,,,LEVEL9",  # 8: level code
        "email.bad,plum-kettle-river-42,2010-01-02,not-an-email,,,",  # 9: email
        "pass.common,password,2010-01-02,,,,",  # 10: common password
        "pass.digits,12345678901,2010-01-02,,,,",  # 11: only digits
        "FINE.ONE,plum-kettle-river-42,2010-01-02,,,,",  # 12: duplicate of row 2, other case
        "LEE.Learner,plum-kettle-river-42,2010-01-02,,,,",  # 13: already registered
        "two.problems,short,13-13-2010,,,,",  # 14: two problems at once
        "extra.cell,plum-kettle-river-42,2010-01-02,,,,,surprise",  # 15: a cell too many
        "fine.two,,2010-01-02,,Ada,Lovelace,loa_partner_level3",  # 16: good, level any case
    ]
    response = upload(staff_client, HEADER + "\n" + "\n".join(rows) + "\n")
    job = job_of(response)

    assert (job.total_rows, job.valid_rows, job.invalid_rows) == (15, 2, 13)
    page = staff_client.get(response["Location"]).content.decode()
    expected = {
        3: "username: Enter a valid username",
        4: "username: Enter the username.",
        5: "dob: Enter a real date, written as day/month/year (27/03/2009) or year-month-day "
        "(2009-03-27).",
        6: "dob: Date of birth must be in the past.",
        7: "dob: With this date of birth the learner would be over 100 years old.",
        8: "level: Write the level as one of Further education, Secondary, Primary or their "
        "codes LOA_PARTNER_LEVEL1, LOA_PARTNER_LEVEL2, LOA_PARTNER_LEVEL3 (capitals do not "
        "matter), or leave it empty.",
        9: "email: Enter a valid email address.",
        10: "password: This password is too common.",
        11: "password: This password is entirely numeric.",
        12: "appears more than once in the file (first at row 2)",
        13: "LEE.Learner is already registered in the portal.",
        15: "The row has 1 more cell than the header",
    }
    problems = {row.row_number: " ".join(row.problems) for row in ImportRow.objects.all()}
    for number, words in expected.items():
        assert words in problems[number], (number, problems[number])
        assert f'<th scope="row" data-label="Row">{number}</th>' in page
    assert "password: This password is too short" in problems[14]
    assert "dob: Enter a real date, written as day/month/year" in problems[14]
    assert problems[2] == problems[16] == ""
    assert ImportRow.objects.get(row_number=16).level == "LOA_PARTNER_LEVEL3"
    assert "13 rows with problems will be skipped" in page
    assert "Register 2 learners" in page
    assert "Nothing has been sent to the assessment service yet." in page


def checked_cells(staff, column: str, cells: list[str]) -> dict[str, ImportRow]:
    """Check a file of one learner per cell of `column` (dob or level); return each cell's row."""
    if column == "dob":
        lines = [f"learner{n},{cell}" for n, cell in enumerate(cells)]
    else:
        lines = [f"learner{n},2010-01-02,{cell}" for n, cell in enumerate(cells)]
    text = "username,dob" + ("" if column == "dob" else f",{column}") + "\n"
    text += "\n".join(lines) + "\n"
    job = import_job_create_from_csv(file=upload_file(text), created_by=staff)
    rows = job.rows.order_by("row_number")
    return dict(zip(cells, rows, strict=True))


def test_dates_are_read_day_first_as_uk_spreadsheets_write_them_or_year_first(staff, db):
    rows = checked_cells(
        staff, "dob", ["27/03/2009", "3/12/2010", "03/04/2010", "2009-03-27", " 1/1/2012 "]
    )

    dates = {cell: (row.state, row.dob) for cell, row in rows.items()}
    assert dates == {
        "27/03/2009": ("queued", date(2009, 3, 27)),
        "3/12/2010": ("queued", date(2010, 12, 3)),  # 3 December, never 12 March
        "03/04/2010": ("queued", date(2010, 4, 3)),
        "2009-03-27": ("queued", date(2009, 3, 27)),
        " 1/1/2012 ": ("queued", date(2012, 1, 1)),
    }


def test_a_date_in_neither_form_is_refused_naming_both(staff, db):
    cells = ["31/02/2010", "13/27/2010", "12/25/2010", "3/12/10", "2009/03/27", "27.03.2009"]
    rows = checked_cells(staff, "dob", cells)

    for cell, row in rows.items():
        assert row.state == "invalid", cell
        assert row.problems == [
            "dob: Enter a real date, written as day/month/year (27/03/2009) or year-month-day "
            "(2009-03-27)."
        ], cell


def test_levels_are_read_as_their_names_or_codes_whatever_the_capitals(staff, db):
    cells = [
        "Primary",
        "secondary",
        "  Further education ",
        "FURTHER EDUCATION",
        "LOA_PARTNER_LEVEL2",
        "loa_partner_level3",
        "",
    ]
    rows = checked_cells(staff, "level", cells)

    levels = {cell: (row.state, row.level) for cell, row in rows.items()}
    assert levels == {
        "Primary": ("queued", "LOA_PARTNER_LEVEL3"),
        "secondary": ("queued", "LOA_PARTNER_LEVEL2"),
        "  Further education ": ("queued", "LOA_PARTNER_LEVEL1"),
        "FURTHER EDUCATION": ("queued", "LOA_PARTNER_LEVEL1"),
        "LOA_PARTNER_LEVEL2": ("queued", "LOA_PARTNER_LEVEL2"),
        "loa_partner_level3": ("queued", "LOA_PARTNER_LEVEL3"),
        "": ("queued", ""),
    }


def test_a_level_neither_name_nor_code_is_refused_naming_every_accepted_one(staff, db):
    rows = checked_cells(staff, "level", ["Year 7", "Further", "LEVEL1"])

    for cell, row in rows.items():
        assert row.state == "invalid", cell
        problem = " ".join(row.problems)
        for accepted in ["Further education", "Secondary", "Primary", *Level.values]:
            assert accepted in problem, (cell, problem)


def test_a_bom_and_blank_lines_and_crlf_are_fine(staff_client):
    text = HEADER + "\r\n" + good_rows(2).replace("\n", "\r\n") + "\r\n,,,,,,\r\n"
    job = job_of(upload(staff_client, text, bom=True))
    assert (job.total_rows, job.valid_rows) == (2, 2)


def test_columns_may_come_in_any_order_and_optional_ones_may_be_missing(staff_client):
    job = job_of(upload(staff_client, "DOB, Username\n2010-04-05,amy.ash\n"))
    row = job.rows.get()
    assert (row.username, row.dob, row.state) == ("amy.ash", date(2010, 4, 5), "queued")
    assert row.password_generated and job.generated_passwords == 1


def test_nothing_goes_upstream_before_confirmation(staff_client, upstream):
    response = upload(staff_client, HEADER + "\n" + good_rows(3))
    preview = staff_client.get(response["Location"])
    progress = staff_client.get(response["Location"] + "progress.json")

    assert preview.status_code == 200 and progress.status_code == 200
    assert "<h1>Check the file before registering</h1>" in preview.content.decode()
    assert creations(upstream) == 0
    assert not upstream.state.learners
    assert not Learner.objects.exists()
    # Confirming is a POST with the CSRF token: a GET does nothing.
    assert staff_client.get(response["Location"] + "confirm/").status_code == 405
    assert creations(upstream) == 0


def test_confirming_needs_the_csrf_token(staff, upstream, db):
    job = checked_file(staff, 1)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(staff)
    assert browser.post(f"/learners/import/{job.pk}/confirm/").status_code == 403
    assert creations(upstream) == 0


def test_a_corrected_file_replaces_the_preview(staff_client):
    first = job_of(upload(staff_client, HEADER + "\nbad name!,,2010-01-01,,,,\n"))
    response = staff_client.post(
        "/learners/import/",
        {"file": upload_file(HEADER + "\ngood.name,,2010-01-01,,,,\n"), "replaces": first.pk},
    )
    second = job_of(response)
    first.refresh_from_db()
    assert first.state == ImportJob.State.DISCARDED
    assert second.valid_rows == 1 and second.state == ImportJob.State.PREVIEW


def test_discarding_a_preview_wipes_its_passwords(staff_client):
    job = job_of(upload(staff_client, HEADER + "\n" + good_rows(2)))
    response = staff_client.post(f"/learners/import/{job.pk}/discard/", follow=True)
    assert "The import was discarded" in response.content.decode()
    assert not ImportRow.objects.exclude(password_encrypted="").exists()
    assert staff_client.post(f"/learners/import/{job.pk}/confirm/").status_code == 302
    job.refresh_from_db()
    assert job.state == ImportJob.State.DISCARDED


def test_a_10000_row_file_is_checked_in_flat_memory(staff, db, settings, monkeypatch):
    settings.IMPORT_MAX_ROWS = 10_000
    # Its passwords are hashed afterwards by the imports workers, not by the check (tests run
    # tasks at once, inside the upload): only that it is asked for is checked here.
    hashing_queued: list[int] = []
    monkeypatch.setattr(imports.services, "enqueue_preview_hashing", hashing_queued.append)
    rows = "".join(
        f"learner{n:05d},,20{n % 10:02d}-0{n % 9 + 1}-1{n % 9},,First{n},Last{n},"
        "LOA_PARTNER_LEVEL1\n"
        for n in range(10_000)
    )
    upload = upload_file(HEADER + "\n" + rows)
    file_size = upload.size

    tracemalloc.start()
    started = time.monotonic()
    job = import_job_create_from_csv(file=upload, created_by=staff)
    elapsed = time.monotonic() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    assert job.valid_rows == 10_000 and job.generated_passwords == 10_000
    assert hashing_queued == [job.pk]
    # The rows live in the database, not in memory: the peak stays a small multiple of one
    # batch, far below the file's 10,000 row objects (~30 MB) held at once.
    print(f"\n10,000 rows ({file_size / 1e6:.2f} MB): checked in {elapsed:.1f} s, "
          f"peak traced memory {peak / 1e6:.1f} MB")  # fmt: skip
    assert peak < 12_000_000, peak


# Registering -----------------------------------------------------------------------------------
#
# Marked `backend`: each row's task claims its row by a conditional update, committed on its
# own, whose outcome under the database's locking is what these tests check.


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_confirming_registers_the_good_rows_and_they_can_sign_in(staff, upstream):
    staff_client = Client()
    staff_client.force_login(staff)
    text = HEADER + "\n" + good_rows(5) + "bad name!,plum-kettle-river-42,2010-01-01,,,,\n"
    job = job_of(upload(staff_client, text))

    response = staff_client.post(f"/learners/import/{job.pk}/confirm/")
    staff_client.post(f"/learners/import/{job.pk}/confirm/")  # a second click does nothing

    assert response.status_code == 302
    job.refresh_from_db()
    assert job.state == ImportJob.State.FINISHED
    assert creations(upstream) == 5
    for n in range(5):
        assert Client().login(username=f"pupil{n}", password=GOOD_PASSWORD)
        learner = Learner.objects.get(username=f"pupil{n}")
        assert learner.status == Learner.Status.ACTIVE and learner.upstream_user_id
        assert learner.registered_by == staff
    event = AuditEvent.objects.get(action=AuditEvent.Action.LEARNERS_IMPORTED)
    assert event.detail == {"import_job": job.pk, "rows_to_register": 5, "rows_skipped": 1}
    page = staff_client.get(f"/learners/import/{job.pk}/").content.decode()
    assert "Import finished" in page and "http-equiv" not in page
    results = csv_rows(staff_client.get(f"/learners/import/{job.pk}/results.csv"))
    assert results[0] == ["row", "username", "outcome", "reason", "user_id"]
    assert [r[2] for r in results[1:]] == ["registered"] * 5 + ["skipped as invalid"]
    assert results[1][4] == Learner.objects.get(username="pupil0").upstream_user_id
    assert "username: Enter a valid username" in results[6][3]
    assert GOOD_PASSWORD not in every_text_in_the_database()
    assert not ImportRow.objects.exclude(password_encrypted="").exists()


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_a_username_taken_upstream_is_reported_on_its_row(staff, upstream):
    get_client().create_learner(username="Pupil1", password=GOOD_PASSWORD, dob=date(2010, 1, 1))
    job = checked_file(staff, 3)
    staff_client = Client()
    staff_client.force_login(staff)

    staff_client.post(f"/learners/import/{job.pk}/confirm/")

    row = ImportRow.objects.get(username="pupil1")
    assert row.state == ImportRow.State.FAILED
    assert "already taken" in row.reason
    assert not Learner.objects.filter(username="pupil1").exists()
    assert not get_user_model().objects.filter(username="pupil1").exists()
    assert Learner.objects.filter(status=Learner.Status.ACTIVE).count() == 2
    page = staff_client.get(f"/learners/import/{job.pk}/").content.decode()
    assert "Rows that failed" in page and "already taken" in page


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_an_upstream_going_down_mid_job_fails_rows_with_reasons(staff, upstream, settings):
    upstream.state.faults.add_spec("create-learner=503:after=2,times=2")
    upstream.state.faults.add_spec("create-learner=drop:after=4,times=1")
    job = checked_file(staff, 6)
    staff_client = Client()
    staff_client.force_login(staff)

    staff_client.post(f"/learners/import/{job.pk}/confirm/")

    outcomes = sorted(job.rows.values_list("state", flat=True))
    assert outcomes == ["failed"] * 3 + ["registered"] * 3
    assert creations(upstream) == 6
    reasons = list(job.rows.filter(state="failed").values_list("reason", flat=True))
    assert all("may have registered this learner" in reason for reason in reasons), reasons
    assert not any("try again in a few minutes" in reason for reason in reasons), reasons
    response = staff_client.get(f"/learners/import/{job.pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "Traceback" not in page and "<strong>3</strong> failed" in page
    assert "Rows that failed" in page and "could not be reached or did not answer" in page


def test_a_row_silent_through_a_database_outage_the_sweep_saw_is_not_given_up(staff, settings):
    """Its worker may hold the upstream's answer, to be written within seconds (ops.database)."""
    from imports.rows import rows_abandon_left_sending
    from ops.database import outage

    job = checked_file(staff, 2)
    long_ago = timezone.now() - timedelta(seconds=settings.IMPORT_STALLED_AFTER + 1)
    row = job.rows.order_by("row_number").first()
    ImportRow.objects.filter(pk=row.pk).update(state=ImportRow.State.SENDING, claimed_at=long_ago)
    outage.last_ended = timezone.now()  # this process just saw the database come back

    assert rows_abandon_left_sending(job.pk, claimed_before=long_ago + timedelta(seconds=1)) == 0
    row.refresh_from_db()
    assert row.state == ImportRow.State.SENDING

    outage.last_ended = None  # and with no outage seen, the silent row is given up
    assert rows_abandon_left_sending(job.pk, claimed_before=long_ago + timedelta(seconds=1)) == 1
    row.refresh_from_db()
    assert row.state == ImportRow.State.FAILED and row.reason == OUTCOME_UNKNOWN


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_a_resumed_job_never_sends_a_row_left_sending(staff, upstream, settings):
    job = checked_file(staff, 4)
    # A worker claimed row 2 and sent it (the service registered it), then died with the
    # tasks of the rows after it.
    row = job.rows.get(row_number=2)
    get_client().create_learner(
        username=row.username, password=GOOD_PASSWORD, dob=row.dob, level=row.level
    )
    long_ago = timezone.now() - timedelta(seconds=settings.IMPORT_STALLED_AFTER + 1)
    ImportJob.objects.filter(pk=job.pk).update(
        state=ImportJob.State.RUNNING,
        confirmed_by=staff,
        confirmed_at=long_ago,
        started_at=long_ago,
        rows_queued_at=long_ago,
    )
    ImportRow.objects.filter(pk=row.pk).update(state=ImportRow.State.SENDING, claimed_at=long_ago)
    staff_client = Client()
    staff_client.force_login(staff)

    # The progress page sees the silent worker and has the job resumed.
    staff_client.get(f"/learners/import/{job.pk}/")

    job.refresh_from_db()
    assert job.state == ImportJob.State.FINISHED
    assert creations(upstream) == 4  # one before the death, three after: row 2 not resent
    row.refresh_from_db()
    assert row.state == ImportRow.State.FAILED and row.reason == OUTCOME_UNKNOWN
    assert job.rows.filter(state="registered").count() == 3
    page = staff_client.get(f"/learners/import/{job.pk}/").content.decode()
    assert "Outcome unknown: the portal stopped while this row was being sent" in page
    assert "if its username is then reported as taken, the service kept it" in page


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_a_row_whose_task_runs_twice_is_sent_once(staff, upstream):
    job = checked_file(staff, 3)
    import_job_confirm(job=job, confirmed_by=staff)
    assert creations(upstream) == 3
    outcomes = list(job.rows.values_list("pk", "state", "reason", "signin_ready_at"))

    # A task queued again (by the sweep while the first still waited), and the job's run too.
    for row_id in job.rows.values_list("pk", flat=True):
        register_import_row.enqueue(row_id)
    run_import_job.enqueue(job.pk)

    assert creations(upstream) == 3
    assert list(job.rows.values_list("pk", "state", "reason", "signin_ready_at")) == outcomes
    job.refresh_from_db()
    assert job.state == ImportJob.State.FINISHED


@pytest.mark.django_db(transaction=True)
def test_the_sweep_leaves_a_row_its_live_worker_is_sending_alone(staff, upstream):
    from django.core.management import call_command

    job = checked_file(staff, 2)
    long_ago = timezone.now() - timedelta(minutes=10)
    ImportJob.objects.filter(pk=job.pk).update(
        state=ImportJob.State.RUNNING, confirmed_by=staff, confirmed_at=long_ago,
        started_at=long_ago, rows_queued_at=long_ago,
    )  # fmt: skip
    sending = job.rows.get(row_number=2)
    ImportRow.objects.filter(pk=sending.pk).update(
        state=ImportRow.State.SENDING, claimed_at=timezone.now()
    )

    call_command("sweep_imports", stdout=io.StringIO())

    sending.refresh_from_db()
    assert sending.state == ImportRow.State.SENDING and sending.reason == ""
    assert creations(upstream) == 0
    job.refresh_from_db()
    assert job.state == ImportJob.State.RUNNING


@pytest.mark.django_db(transaction=True)
def test_a_job_waiting_behind_a_busy_import_is_not_run_again(staff, upstream):
    from django.core.management import call_command

    long_ago = timezone.now() - timedelta(minutes=10)
    busy, waiting = (
        checked_file(staff, 2),
        import_job_create_from_csv(
            file=upload_file(HEADER + "\n" + good_rows(2, prefix="later")), created_by=staff
        ),
    )
    ImportJob.objects.filter(pk__in=[busy.pk, waiting.pk]).update(
        state=ImportJob.State.RUNNING, confirmed_by=staff, confirmed_at=long_ago,
        started_at=long_ago, rows_queued_at=long_ago,
    )  # fmt: skip
    # The workers are on the other import: one of its rows was just sent.
    busy.rows.filter(row_number=2).update(state="registered", finished_at=timezone.now())

    call_command("sweep_imports", stdout=io.StringIO())

    assert creations(upstream) == 0
    waiting.refresh_from_db()
    assert waiting.state == ImportJob.State.RUNNING and waiting.resume_requested_at is None


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_generated_passwords_can_be_downloaded_once_then_they_are_gone(staff, upstream):
    staff_client = Client()
    staff_client.force_login(staff)
    job = job_of(upload(staff_client, "username,dob,first_name\nkit.kay,2012-02-02,Kit\n"
                        "max.moe,2013-03-03,Max\n"))  # fmt: skip
    staff_client.post(f"/learners/import/{job.pk}/confirm/")
    page = staff_client.get(f"/learners/import/{job.pk}/").content.decode()
    assert "Download the passwords (once)" in page

    response = staff_client.post(f"/learners/import/{job.pk}/passwords.csv")

    rows = csv_rows(response)
    assert rows[0] == ["row", "username", "password", "first_name", "last_name"]
    credentials = {username: password for _, username, password, _, _ in rows[1:]}
    assert set(credentials) == {"kit.kay", "max.moe"}
    for username, password in credentials.items():
        assert len(password) >= 14
        assert Client().login(username=username, password=password)
    database = every_text_in_the_database()
    assert not any(password in database for password in credentials.values())
    assert not ImportRow.objects.exclude(password_encrypted="").exists()
    assert AuditEvent.objects.filter(action=AuditEvent.Action.CREDENTIALS_DOWNLOADED).count() == 1

    again = staff_client.post(f"/learners/import/{job.pk}/passwords.csv", follow=True)
    assert "no longer available" in again.content.decode()
    page = staff_client.get(f"/learners/import/{job.pk}/").content.decode()
    assert "were downloaded on" in page and "Reset password" in page
    assert staff_client.get(f"/learners/import/{job.pk}/passwords.csv").status_code == 405


@pytest.mark.backend
@pytest.mark.django_db(transaction=True)
def test_generated_passwords_expire_an_hour_after_the_job_finished(staff, upstream, monkeypatch):
    job = import_job_create_from_csv(
        file=upload_file("username,dob\nkit.kay,2012-02-02\n"), created_by=staff
    )
    staff_client = Client()
    staff_client.force_login(staff)
    staff_client.post(f"/learners/import/{job.pk}/confirm/")
    assert ImportRow.objects.exclude(password_encrypted="").count() == 1  # awaiting download

    later = timezone.now() + timedelta(minutes=61)
    monkeypatch.setattr(timezone, "now", lambda: later)
    page = staff_client.get(f"/learners/import/{job.pk}/").content.decode()

    assert "deleted an hour after the import finished" in page
    assert not ImportRow.objects.exclude(password_encrypted="").exists()
    response = staff_client.post(f"/learners/import/{job.pk}/passwords.csv", follow=True)
    assert "no longer available" in response.content.decode()


# Progress --------------------------------------------------------------------------------------


def test_progress_shows_each_state_as_json_and_as_a_page(staff_client, staff, monkeypatch):
    job = checked_file(staff, 10)
    url = f"/learners/import/{job.pk}/"
    preview = staff_client.get(url + "progress.json").json()
    assert preview["state"] == "preview" and preview["remaining"] == 10 and preview["done"] == 0

    # Mid-way: 4 registered, 1 failed, 1 being sent, 4 waiting, after 50 seconds.
    now, numbers = mid_way(job)

    running = staff_client.get(url + "progress.json").json()
    assert running["done"] == 5 and running["remaining"] == 5 and running["percent"] == 50
    # 5 rows to send at 5 per 50 s, but 5 accounts to set up at 4 per 50 s: the slower wins.
    assert running["seconds_left"] == 63
    sending = "Sending learners to the assessment service and setting up their sign-in."
    assert running["summary"] == (
        f"5 of 10 learners done (1 failed), about 2 minutes left. {sending}"
    )
    page = staff_client.get(url).content.decode()
    assert '<progress id="import-progress" max="10" value="5">50%</progress>' in page
    assert running["summary"] in page
    assert '<noscript><meta http-equiv="refresh" content="5"></noscript>' in page
    assert "js/import_progress.js" in page and 'aria-live="polite"' in page
    assert "The service said no." in page

    ImportJob.objects.filter(pk=job.pk).update(started_at=now - timedelta(seconds=600))
    slow = staff_client.get(url + "progress.json").json()
    assert slow["summary"] == f"5 of 10 learners done (1 failed), about 13 minutes left. {sending}"
    ImportRow.objects.filter(pk=numbers[5]).update(state="registered", signin_ready_at=now)
    ImportRow.objects.filter(state="queued").update(state="registered", signin_ready_at=now)
    ImportRow.objects.filter(pk=numbers[9]).update(state="queued", signin_ready_at=None)
    ImportJob.objects.filter(pk=job.pk).update(started_at=now - timedelta(seconds=50))
    nearly = staff_client.get(url + "progress.json").json()
    assert nearly["summary"] == (
        f"9 of 10 learners done (1 failed), less than a minute left. {sending}"
    )

    ImportRow.objects.filter(state__in=["sending", "queued"]).update(
        state="registered", signin_ready_at=now
    )
    ImportJob.objects.filter(pk=job.pk).update(state=ImportJob.State.FINISHED, finished_at=now)
    finished = staff_client.get(url + "progress.json").json()
    assert finished["finished"] and finished["percent"] == 100
    page = staff_client.get(url).content.decode()
    assert "Import finished" in page and "<progress" not in page and "http-equiv" not in page


def test_the_result_file_neutralises_formula_cells(staff_client):
    text = HEADER + '\n"=HYPERLINK(""http://evil"")",,2010-01-01,,,,\n@SUM(A1),,2010-01-01,,,,\n'
    job = job_of(upload(staff_client, text))

    rows = csv_rows(staff_client.get(f"/learners/import/{job.pk}/results.csv"))

    assert rows[1][1] == '\'=HYPERLINK("http://evil")'
    assert rows[2][1] == "'@SUM(A1)"
    assert rows[1][2] == "skipped as invalid"


def test_passwords_waiting_to_be_sent_are_encrypted(staff_client):
    job = job_of(upload(staff_client, HEADER + "\n" + good_rows(1)))
    row = job.rows.get()
    assert GOOD_PASSWORD not in every_text_in_the_database()
    assert password_decrypt(row.password_encrypted) == GOOD_PASSWORD
    assert password_encrypt(GOOD_PASSWORD) != row.password_encrypted  # fresh IV each time


# A real worker ---------------------------------------------------------------------------------


@pytest.mark.backend  # the database task queue, read by a second process
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_an_import_to_completion(staff, upstream, settings):
    settings.TASKS = DATABASE_TASKS
    # The worker hashes with the portal's own hasher: let this process check such a hash.
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        "accounts.hashers.PortalArgon2PasswordHasher",
    ]
    job = checked_file(staff, 6)
    staff_client = Client()
    staff_client.force_login(staff)
    staff_client.post(f"/learners/import/{job.pk}/confirm/")
    job.refresh_from_db()
    assert job.state == ImportJob.State.RUNNING and creations(upstream) == 0  # queued only

    worker = run_db_worker(upstream.base_url, queue="imports", timeout=120)

    assert worker.returncode == 0, worker.stderr[-2000:]
    job.refresh_from_db()
    assert job.state == ImportJob.State.FINISHED, worker.stderr[-2000:]
    assert creations(upstream) == 6
    assert Client().login(username="pupil3", password=GOOD_PASSWORD)


@pytest.mark.backend  # real workers reading the database task queue, each its own process
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_row_leaves_it_unknown_and_a_new_one_sends_the_rest(
    staff, upstream, settings, monkeypatch
):
    from django.core.management import call_command

    settings.TASKS = DATABASE_TASKS
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        "accounts.hashers.PortalArgon2PasswordHasher",
    ]
    # The first row's call is read upstream, then never answered: its worker dies waiting.
    upstream.state.faults.add_spec("create-learner=hang:seconds=120,times=1")
    worker_env = {"PARTNER_API_TIMEOUT": "3.05,150"}  # it waits for the answer until killed
    job = checked_file(staff, 4)
    import_job_confirm(job=job, confirmed_by=staff)
    sending = job.rows.filter(state=ImportRow.State.SENDING)

    with db_worker_running(upstream.base_url, "imports", env=worker_env) as first:
        wait_for(lambda: sending.exists() and creations(upstream) == 1, first, "a row sent")
        first.process.kill()
        first.process.wait()
    cut_off = sending.get()

    with db_worker_running(upstream.base_url, "imports", env=worker_env) as second:
        wait_for(
            lambda: job.rows.filter(signin_ready_at__isnull=False).count() == 3,
            second,
            "the other rows registered and ready to sign in",
        )

    assert creations(upstream) == 4  # the cut-off row once, the others once each
    cut_off.refresh_from_db()
    assert cut_off.state == ImportRow.State.SENDING  # nobody knows whether it arrived
    job.refresh_from_db()
    assert job.state == ImportJob.State.RUNNING

    # A minute later the sweep takes its worker for dead: unknown, never sent again.
    later = timezone.now() + timedelta(seconds=settings.IMPORT_STALLED_AFTER + 1)
    monkeypatch.setattr(timezone, "now", lambda: later)
    out = io.StringIO()
    call_command("sweep_imports", stdout=out)

    assert "1 rows cut off marked outcome unknown, 1 finished" in out.getvalue()
    cut_off.refresh_from_db()
    assert cut_off.state == ImportRow.State.FAILED and cut_off.reason == OUTCOME_UNKNOWN
    assert not Learner.objects.filter(username=cut_off.username).exists()
    job.refresh_from_db()
    assert job.state == ImportJob.State.FINISHED
    assert creations(upstream) == 4
    sent = job.rows.filter(state=ImportRow.State.REGISTERED).values_list("username", flat=True)
    assert all(Client().login(username=name, password=GOOD_PASSWORD) for name in sent)


@pytest.mark.django_db(transaction=True)
def test_a_username_registered_here_after_the_check_is_not_sent(staff, upstream):
    job = checked_file(staff, 2)
    # As registration stores it: in normal form.
    get_user_model().objects.create_user(username_normal_form("PUPIL0"), password=GOOD_PASSWORD)
    staff_client = Client()
    staff_client.force_login(staff)

    staff_client.post(f"/learners/import/{job.pk}/confirm/")

    row = job.rows.get(username="pupil0")
    assert row.state == ImportRow.State.FAILED and row.reason.startswith("Not sent")
    assert creations(upstream) == 1


def test_the_sweep_discards_old_previews_and_wipes_expired_passwords(staff, db, settings):
    from django.core.management import call_command

    old_preview = import_job_create_from_csv(
        file=upload_file(HEADER + "\n" + good_rows(1)), created_by=staff
    )
    ImportJob.objects.filter(pk=old_preview.pk).update(
        created_at=timezone.now() - timedelta(seconds=settings.IMPORT_PREVIEW_TTL + 1)
    )
    finished = import_job_create_from_csv(
        file=upload_file("username,dob\nkit.kay,2012-02-02\n"), created_by=staff
    )
    ImportJob.objects.filter(pk=finished.pk).update(
        state=ImportJob.State.FINISHED, finished_at=timezone.now() - timedelta(minutes=61)
    )
    out = io.StringIO()

    call_command("sweep_imports", stdout=out)

    assert "1 sets of passwords wiped, 1 previews discarded" in out.getvalue()
    old_preview.refresh_from_db()
    assert old_preview.state == ImportJob.State.DISCARDED
    assert not ImportRow.objects.exclude(password_encrypted="").exists()


def test_a_corrected_file_from_a_preview_confirmed_meanwhile_leaves_it_alone(staff_client, staff):
    first = job_of(upload(staff_client, HEADER + "\n" + good_rows(1)))
    ImportJob.objects.filter(pk=first.pk).update(state=ImportJob.State.RUNNING)
    response = staff_client.post(
        "/learners/import/",
        {"file": upload_file(HEADER + "\n" + good_rows(1, prefix="other")), "replaces": first.pk},
    )
    assert job_of(response).state == ImportJob.State.PREVIEW
    first.refresh_from_db()
    assert first.state == ImportJob.State.RUNNING


def stack_depth() -> int:
    """Return how many frames the calling code runs under."""
    frame, depth = sys._getframe(1), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


@pytest.mark.django_db(transaction=True)
def test_tasks_run_at_once_go_no_deeper_for_the_last_row_than_the_first(staff, upstream):
    # Tests run tasks at once, inside the task that queues them: a task per row must not nest
    # each row's task inside the last one's (1,000 rows would overflow the stack).
    depths: list[int] = []
    real = PartnerApiClient.create_learner

    def measured(self, **kwargs):
        depths.append(stack_depth())
        return real(self, **kwargs)

    job = checked_file(staff, 120)  # more than one batch of accounts
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PartnerApiClient, "create_learner", measured)
        import_job_confirm(job=job, confirmed_by=staff)

    assert len(depths) == 120
    assert max(depths) == min(depths), (depths[0], depths[-1])
    job.refresh_from_db()
    assert job.state == ImportJob.State.FINISHED
    assert job.rows.filter(state="registered", signin_ready_at__isnull=False).count() == 120


@pytest.mark.backend  # rows claimed and failed by conditional updates, committed row by row
@pytest.mark.django_db(transaction=True)
def test_a_changed_secret_key_fails_rows_unsent_with_a_reason(staff, upstream, settings):
    from imports.services import import_job_confirm

    job = checked_file(staff, 2)
    settings.SECRET_KEY = "a-new-secret-key-since-the-file-was-checked"

    import_job_confirm(job=job, confirmed_by=staff)

    assert creations(upstream) == 0
    reasons = set(job.rows.values_list("reason", flat=True))
    assert len(reasons) == 1 and reasons.pop().startswith("Not sent: the password kept")
    job.refresh_from_db()
    assert job.state == ImportJob.State.FINISHED
    assert not Learner.objects.exists()


def test_erasing_a_learner_can_blank_their_import_row(staff, db):
    from imports.services import import_rows_forget

    job = checked_file(staff, 1)
    row = job.rows.get()
    learner = Learner.objects.create(
        user=get_user_model().objects.create_user("pupil0"), username="pupil0"
    )
    ImportRow.objects.filter(pk=row.pk).update(learner=learner, state="registered")

    assert import_rows_forget(learner=learner) == 1

    row.refresh_from_db()
    assert (row.username, row.first_name, row.dob, row.password_encrypted) == ("", "", None, "")


# In a real browser -----------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_progress_bar_moves_in_a_browser_and_the_page_reloads_when_done(
    browser, live_server, staff
):

    job = checked_file(staff, 10)
    ImportJob.objects.filter(pk=job.pk).update(
        state=ImportJob.State.RUNNING,
        started_at=timezone.now(),
        rows_queued_at=timezone.now() + timedelta(minutes=5),  # alive: no resume from the page
    )
    refused = []
    chromium = browser
    page = chromium.new_page()
    page.on(
        "console",
        lambda message: refused.append(message.text) if "Refused" in message.text else None,
    )
    browser_sign_in(page, live_server.url, staff.username)
    page.goto(f"{live_server.url}/learners/import/{job.pk}/")
    assert page.eval_on_selector("#import-progress", "bar => bar.value") == 0

    first_five = job.rows.order_by("row_number").values_list("pk", flat=True)[:5]
    ImportRow.objects.filter(pk__in=list(first_five)).update(
        state="registered", signin_ready_at=timezone.now()
    )
    for _ in range(75):  # the script polls every 2 s; wait_for_function needs eval
        if page.eval_on_selector("#import-progress", "bar => bar.value") == 5:
            break
        page.wait_for_timeout(200)
    assert "5 of 10 learners done" in page.inner_text("#import-summary")

    job.rows.update(state="registered", signin_ready_at=timezone.now())
    ImportJob.objects.filter(pk=job.pk).update(
        state=ImportJob.State.FINISHED, finished_at=timezone.now()
    )
    page.wait_for_selector("h1:has-text('Import finished')", timeout=15000)
    # Inside Playwright's context Django opened a connection of its own: close it, or
    # the test database cannot be dropped.
    connection.close()

    assert not refused, refused


@pytest.mark.parametrize(
    "error, cause",
    [
        (
            PartnerApiServerError("create-learner", status=500),
            "the assessment service had an internal error",
        ),
        (
            PartnerApiUnavailable("create-learner", "connection dropped"),
            "the assessment service could not be reached or did not answer in time",
        ),
    ],
)
def test_a_row_that_may_have_been_registered_says_why_and_what_to_do(error, cause):
    reason = registration_failure(error).row_reason
    assert reason.startswith(f"Outcome unknown: {cause}. The service may have registered")
    assert "try again" not in reason.lower()
