"""An import's progress: one figure for the bar and its words, through every phase of a run."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from imports.models import ImportJob, ImportRow
from imports.selectors import import_progress
from imports.services import import_job_create_from_csv
from tests.factories import HEADER, good_rows, upload_file

SENDING = "Sending learners to the assessment service and setting up their sign-in."
SETTING_UP = "Every learner is sent; setting up sign-in for the last ones."


@pytest.fixture
def job(staff) -> ImportJob:
    """A checked file of four learners."""
    return import_job_create_from_csv(
        file=upload_file(HEADER + "\n" + good_rows(4)), created_by=staff
    )


def rows_of(job: ImportJob) -> list[int]:
    return list(job.rows.order_by("row_number").values_list("pk", flat=True))


def run(job: ImportJob, *, started: bool = True) -> None:
    """Confirm the job, and start its run 40 seconds ago unless `started` is False."""
    now = timezone.now()
    ImportJob.objects.filter(pk=job.pk).update(
        state=ImportJob.State.RUNNING,
        confirmed_at=now - timedelta(seconds=40),
        started_at=now - timedelta(seconds=40) if started else None,
    )
    job.refresh_from_db()


def outcome(rows: list[int], state: str, *, ready: bool = False) -> None:
    ImportRow.objects.filter(pk__in=rows).update(
        state=state, signin_ready_at=timezone.now() if ready else None
    )


def test_a_preview_has_done_nothing(job):
    progress = import_progress(job)
    assert (progress.phase, progress.done, progress.to_send, progress.percent) == (
        "preview",
        0,
        4,
        0,
    )


def test_a_confirmed_job_no_run_has_started_waits_at_nought(job):
    run(job, started=False)

    progress = import_progress(job)

    assert (progress.phase, progress.done, progress.percent) == ("waiting", 0, 0)
    assert progress.summary == "0 of 4 learners done. Waiting for the import to start."


def test_while_sending_a_learner_counts_once_registered_and_ready_or_failed(job):
    run(job)
    first, second, third, _fourth = rows_of(job)
    outcome([first], "registered", ready=True)
    outcome([second], "registered")  # sent, its account not set up yet
    outcome([third], "failed")

    progress = import_progress(job)

    assert (progress.phase, progress.done, progress.percent) == ("sending", 2, 50)
    assert progress.summary.startswith("2 of 4 learners done (1 failed), ")
    assert progress.summary.endswith(SENDING)


def test_the_bar_is_not_full_while_sign_in_is_still_being_set_up(job):
    run(job)
    first, *others = rows_of(job)
    outcome([first], "registered", ready=True)
    outcome(others, "registered")  # every row sent; three accounts still being set up

    progress = import_progress(job)

    assert (progress.phase, progress.done, progress.percent) == ("sign_in", 1, 25)
    assert progress.summary.startswith("1 of 4 learners done, ")
    assert progress.summary.endswith(SETTING_UP)


def test_the_bar_is_full_once_every_learner_is_ready_or_failed(job):
    run(job)
    first, *others = rows_of(job)
    outcome([first], "failed")
    outcome(others, "registered", ready=True)
    assert (import_progress(job).done, import_progress(job).percent) == (4, 100)

    ImportJob.objects.filter(pk=job.pk).update(state=ImportJob.State.FINISHED)
    job.refresh_from_db()

    progress = import_progress(job)
    assert (progress.phase, progress.done, progress.percent, progress.time_left) == (
        "finished",
        4,
        100,
        "",
    )


BAR = re.compile(r'<progress id="import-progress" max="(\d+)" value="(\d+)">(\d+)%</progress>')


@pytest.mark.parametrize("phase", ["waiting", "sending", "sign_in"])
def test_the_bar_and_its_words_show_the_same_figure_on_the_page_and_in_its_json(
    staff_client, job, phase
):
    run(job, started=phase != "waiting")
    first, second, *others = rows_of(job)
    if phase != "waiting":
        outcome([first], "registered", ready=True)
        outcome([second], "failed")
    if phase == "sign_in":
        outcome(others, "registered")
    url = f"/learners/import/{job.pk}/"

    page = staff_client.get(url).content.decode()
    json = staff_client.get(url + "progress.json").json()

    total, value, percent = (int(figure) for figure in BAR.search(page).groups())
    summary = re.search(r'<p id="import-summary"[^>]*>([^<]*)</p>', page).group(1)
    assert summary.startswith(f"{value} of {total} learners done")
    assert percent == 100 * value // total
    assert (json["done"], json["to_send"], json["percent"]) == (value, total, percent)
    assert json["summary"] == summary
    assert json["phase"] == phase
    # One count of the learners on the page, not the bar's and a second one of accounts.
    assert page.count(" learners done") == 1
