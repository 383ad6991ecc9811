"""CSV exports of learners and results: filters in force, safe cells, streamed, flat memory."""

import csv
import io
import tracemalloc
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.http import StreamingHttpResponse
from django.utils import timezone

from assessments.models import AssessmentAttempt, AssessmentResult, FocusArea
from audit.models import AuditEvent
from imports.models import ImportJob, ImportRow
from imports.services import import_job_create_from_csv
from learners.models import Learner, Level
from privacy.services import learner_erase
from tests.factories import cohort_learner, completed, upload_file

State = AssessmentAttempt.State


def rows_of(response) -> list[dict[str, str]]:
    """Return the CSV body of a streamed download as dicts."""
    assert isinstance(response, StreamingHttpResponse)
    text = b"".join(response.streaming_content).decode("utf-8")
    assert text.startswith("\ufeff")
    return list(csv.DictReader(io.StringIO(text[1:])))


@pytest.mark.backend  # search
def test_the_learners_export_honours_the_search_and_level_of_the_list(staff_client):
    cohort_learner(name="amira", level=Level.SECONDARY)
    cohort_learner(name="amir", level=Level.PRIMARY)
    cohort_learner(name="bo", level=Level.SECONDARY)

    response = staff_client.get("/learners/learners.csv", {"q": "amir", "level": Level.SECONDARY})

    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="learners-')
    rows = rows_of(response)
    assert [row["username"] for row in rows] == ["amira"]
    assert rows[0]["level"] == "Secondary"


def test_the_learners_export_writes_iso_dates_and_leaves_out_secrets_and_erased_learners(
    staff_client, staff
):
    kept = cohort_learner(name="kept", registered="2026-09-01")
    Learner.objects.filter(pk=kept.pk).update(dob="2010-05-17")
    erased = cohort_learner(name="gone")
    learner_erase(learner=erased, erased_by=staff)
    completed(kept, "2026-09-10", risk="HIGH")

    response = staff_client.get("/learners/learners.csv")
    body = b"".join(response.streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(body[1:])))

    assert [row["username"] for row in rows] == ["kept"]
    assert rows[0]["dob"] == "2010-05-17"
    assert rows[0]["registered_at"] == "2026-09-01T11:00:00+00:00"
    assert rows[0]["latest_assessment_state"] == "completed"
    assert rows[0]["latest_risk_level"] == "HIGH"
    assert "u-kept" not in body and "upstream" not in body and "erased-" not in body


@pytest.mark.parametrize("trigger", ["=", "+", "-", "@"])
def test_cells_that_a_spreadsheet_would_run_as_formulas_are_neutralised(staff_client, trigger):
    learner = cohort_learner(name="formula")
    Learner.objects.filter(pk=learner.pk).update(
        first_name=f'{trigger}HYPERLINK("http://evil")', last_name=f"{trigger}1+1"
    )
    completed(learner, "2026-09-10", risk=f"{trigger}cmd|' /C calc'!A0",
              areas={f"{trigger}SUM(A1)": "yes"})  # fmt: skip

    learners = rows_of(staff_client.get("/learners/learners.csv"))
    results = rows_of(staff_client.get("/learners/results.csv"))

    assert learners[0]["first_name"] == f'\'{trigger}HYPERLINK("http://evil")'
    assert learners[0]["last_name"] == f"'{trigger}1+1"
    assert learners[0]["latest_risk_level"].startswith(f"'{trigger}")
    assert results[0]["first_name"].startswith(f"'{trigger}")
    assert results[0]["risk_level"] == f"'{trigger}cmd|' /C calc'!A0"
    assert results[0]["focus_areas_needing_help"] == f"'{trigger}SUM(A1)"


# Text meant to run as a formula in a spreadsheet that splits cells on a semicolon or a tab,
# or starts a row at a line break: quoting alone does not stop those.
HOSTILE_CELLS = [
    "a;=cmd|' /C calc'!A0",
    'b; "+SUM(1)"',
    "c\t-1+1",
    "d\n@SUM(A1)",
    "e\r\n=1+1",
    "f,=2+2",
]
SEPARATORS = [",", ";", "\t"]
FORMULA_SIGNS = ("=", "+", "-", "@")


def hostile_import(staff) -> ImportJob:
    """A finished bulk registration whose names and reasons are the hostile cells."""
    upload = io.StringIO()
    writer = csv.writer(upload)
    writer.writerow(["username", "dob", "first_name", "last_name"])
    for n, text in enumerate(HOSTILE_CELLS):
        writer.writerow([f"pupil.{n}", "2012-02-02", text, text])
    job = import_job_create_from_csv(file=upload_file(upload.getvalue()), created_by=staff)
    job.rows.update(state=ImportRow.State.REGISTERED)
    for row, text in zip(job.rows.order_by("row_number"), HOSTILE_CELLS, strict=True):
        ImportRow.objects.filter(pk=row.pk).update(reason=text)  # an upstream message
    ImportJob.objects.filter(pk=job.pk).update(
        state=ImportJob.State.FINISHED,
        finished_at=timezone.now(),
        generated_passwords=len(HOSTILE_CELLS),
    )
    return job


def test_no_export_starts_a_formula_in_a_spreadsheet_splitting_on_any_separator(
    staff_client, staff
):
    for n, text in enumerate(HOSTILE_CELLS):
        learner = cohort_learner(name=f"hostile{n}")
        Learner.objects.filter(pk=learner.pk).update(first_name=text, last_name=text)
        completed(learner, "2026-09-10", risk=text, areas={text: "yes", f"z{text}": "yes"})
    job = hostile_import(staff)
    downloads = {
        "learners": staff_client.get("/learners/learners.csv"),
        "results": staff_client.get("/learners/results.csv"),
        "import template": staff_client.get("/learners/import/template.csv"),
        "import results": staff_client.get(f"/learners/import/{job.pk}/results.csv"),
        "import passwords": staff_client.post(f"/learners/import/{job.pk}/passwords.csv"),
    }

    for name, response in downloads.items():
        assert response.status_code == 200, name
        body = b"".join(response.streaming_content).decode("utf-8-sig")
        assert "cmd|" in body or name == "import template", name  # the hostile text is there
        every_text_cell_quoted(body)
        for separator in SEPARATORS:
            for line in csv.reader(io.StringIO(body), delimiter=separator):
                for field in line:
                    assert not field.lstrip(' \t\r\n"').startswith(FORMULA_SIGNS), (name, field)


def every_text_cell_quoted(body: str) -> None:
    """Check that each cell below the header is quoted unless it is a number."""
    header, rows = body.split("\r\n", 1)
    assert '"' not in header  # the column names, a data interface, are as they always were
    for line in csv.reader(io.StringIO(rows), quoting=csv.QUOTE_NONNUMERIC):
        # QUOTE_NONNUMERIC reads every unquoted cell as a float: a text cell would fail.
        assert line


@pytest.mark.backend  # time windows
def test_the_results_export_honours_the_dashboards_level_and_dates(staff_client):
    primary = cohort_learner(name="prim", level=Level.PRIMARY)
    secondary = cohort_learner(name="sec", level=Level.SECONDARY)
    completed(primary, "2026-08-31", score="10")
    completed(primary, "2026-09-01", score="20")
    completed(primary, "2026-09-30", score="30")
    completed(primary, "2026-10-01", score="40")
    completed(secondary, "2026-09-15", score="50")
    AssessmentAttempt.objects.create(learner=primary, assessment_id=999, state=State.IN_PROGRESS)

    response = staff_client.get(
        "/learners/results.csv",
        {"level": Level.PRIMARY, "from": "2026-09-01", "to": "2026-09-30"},
    )

    rows = rows_of(response)
    assert [row["loa_score"] for row in rows] == ["20.0000", "30.0000"]
    assert rows[0]["completed_at"] == "2026-09-01T11:00:00+00:00"
    assert rows[0]["username"] == "prim"
    assert rows[0]["level"] == "Primary"
    assert rows[0]["focus_areas_needing_help"] == "Time management"
    assert rows[0]["assessment_title"] == "Study skills"
    assert rows[0]["personal_data_erased"] == "no"


def test_the_results_of_an_erased_learner_are_exported_without_anything_naming_them(
    staff_client, staff
):
    learner = cohort_learner(name="named.person")
    completed(learner, "2026-09-10", areas={"Sleep": "yes", "Focus": "no", "Mood": "Yes"})
    learner_erase(learner=learner, erased_by=staff)

    body = b"".join(staff_client.get("/learners/results.csv").streaming_content).decode()
    row = next(csv.DictReader(io.StringIO(body[1:])))

    assert (row["username"], row["first_name"], row["last_name"]) == ("", "", "")
    assert row["personal_data_erased"] == "yes"
    assert row["focus_areas_needing_help"] == "Sleep; Mood"
    assert "named" not in body and "erased-" not in body


def test_every_export_is_audited_with_its_filters(staff_client, staff):
    staff_client.get("/learners/learners.csv", {"q": "amira", "level": Level.PRIMARY})
    staff_client.get("/learners/results.csv", {"level": Level.PRIMARY, "from": "2026-09-01"})

    learners_event, results_event = AuditEvent.objects.order_by("id")
    assert learners_event.action == AuditEvent.Action.LEARNERS_EXPORTED
    assert learners_event.detail == {"q": "amira", "level": Level.PRIMARY}
    assert learners_event.actor == staff
    assert results_event.action == AuditEvent.Action.RESULTS_EXPORTED
    assert results_event.detail == {"level": Level.PRIMARY, "from": "2026-09-01", "to": ""}


def test_bad_filters_export_nothing_and_say_why(staff_client):
    response = staff_client.get(
        "/learners/results.csv", {"from": "2026-09-30", "to": "2026-09-01"}, follow=True
    )
    html = response.content.decode()

    assert response.redirect_chain[0][0].startswith("/dashboard/?from=2026-09-30")
    assert "Nothing was exported: correct the filters first." in html
    assert "The To date must be the same as the From date or later." in html
    response = staff_client.get("/learners/learners.csv", {"level": "LEVEL9"}, follow=True)
    assert response.redirect_chain[0][0].startswith("/learners/?level=LEVEL9")
    assert "Nothing was exported" in response.content.decode()
    assert not AuditEvent.objects.exists()


def test_exports_are_for_staff_only_and_only_by_get(client, learner, staff):
    for url in ("/learners/learners.csv", "/learners/results.csv"):
        assert client.get(url).url.startswith("/accounts/login/?next=")
    client.force_login(learner.user)
    for url in ("/learners/learners.csv", "/learners/results.csv"):
        assert client.get(url).status_code == 404
    client.force_login(staff)
    for url in ("/learners/learners.csv", "/learners/results.csv"):
        assert client.post(url).status_code == 405


def test_the_learner_list_links_to_the_export_with_its_current_filters(staff_client):
    cohort_learner(name="amira", level=Level.SECONDARY)

    html = staff_client.get(
        "/learners/", {"q": "amira", "level": Level.SECONDARY, "page": "1"}
    ).content.decode()

    assert 'href="/learners/learners.csv?q=amira&amp;level=LOA_PARTNER_LEVEL2"' in html


def _results(count: int, *, prefix: str) -> None:
    """Create `count` completed attempts with results and two focus areas, in bulk."""
    users = User.objects.bulk_create(User(username=f"{prefix}{i}") for i in range(count // 10))
    learners = Learner.objects.bulk_create(
        Learner(
            user=user,
            username=user.username,
            first_name="Bulk",
            last_name=f"=Row{i}",
            level=Level.SECONDARY,
            status=Learner.Status.ACTIVE,
        )
        for i, user in enumerate(users)
    )
    now = timezone.now()
    attempts = AssessmentAttempt.objects.bulk_create(
        AssessmentAttempt(
            learner=learners[i // 10],
            assessment_id=i,
            state=State.COMPLETED,
            title="Study skills",
            submitted_at=now,
            completed_at=now,
        )
        for i in range(count)
    )
    results = AssessmentResult.objects.bulk_create(
        AssessmentResult(attempt=a, loa_score=Decimal("55.5"), risk_level="MODERATE")
        for a in attempts
    )
    FocusArea.objects.bulk_create(
        FocusArea(result=r, name=name, needs_help=value, questions_count=3, position=p)
        for r in results
        for p, (name, value) in enumerate((("Time management", "yes"), ("Sleep", "no")))
    )


@pytest.mark.backend  # chunked reads
@pytest.mark.parametrize("url", ["/learners/results.csv", "/learners/learners.csv"])
def test_an_export_runs_the_same_queries_for_10_and_100_rows(
    staff_client, django_assert_num_queries, url
):
    # Three for a staff request that records an audit event (session, user with staff role,
    # the event), then one for the rows and, for results, one for a chunk's focus areas: the
    # same for 10 rows or 2,000. Two more since schools: the user's school roles (read with
    # the user) and the partner's schools (once a request); a shared cache keeps both. One
    # more since classes: a chunk's learners' classes.
    expected = 7 + (url == "/learners/results.csv")
    for prefix, added, size in (("small", 10, 10), ("big", 90, 100)):
        _results(added, prefix=prefix)
        rows_of(staff_client.get(url))  # the session's activity time is saved now, not below
        with django_assert_num_queries(expected):
            rows = rows_of(staff_client.get(url))
        assert len(rows) == (size if "results" in url else size // 10)


@pytest.mark.backend  # chunked reads
def test_a_large_results_export_streams_in_flat_memory(staff_client, monkeypatch):
    # Smaller chunks than in production, so that holding the file whole would stand out.
    monkeypatch.setattr("dashboard.exports.CHUNK_SIZE", 500)
    _results(20_000, prefix="m")
    response = staff_client.get("/learners/results.csv")
    assert isinstance(response, StreamingHttpResponse)

    tracemalloc.start()
    baseline = tracemalloc.get_traced_memory()[0]
    lines = 0
    size = 0
    for part in response.streaming_content:
        lines += part.count(b"\n")
        size += len(part)
    peak = tracemalloc.get_traced_memory()[1] - baseline
    tracemalloc.stop()

    assert lines == 20_001
    # What is held at once is one chunk of rows (about 1.4 MB here), not the file.
    assert size > 3_000_000
    assert peak < size / 2, f"peak growth {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB file"
    # How fast it streams is measured by `make bench` (its export part), not here: a time
    # limit in a test fails on a busy machine, not on a slow export.
