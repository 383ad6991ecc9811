"""A bulk registration hashes its passwords while staff read the preview, else during the call."""

import threading
import time

import pytest
from django.test import Client

import imports.hashing
import imports.rows
import imports.services
from imports.hashing import preview_batches, preview_passwords_hash
from imports.models import ImportJob, ImportRow
from imports.services import import_job_confirm, import_job_create_from_csv, import_job_discard
from partner_api import PartnerApiClient
from tests.factories import GOOD_PASSWORD, HEADER, good_rows, upload_file

pytestmark = pytest.mark.django_db(transaction=True)

CALL_SECONDS = 0.3  # each upstream call, long enough to see the hash made meanwhile


def preview(staff, count: int) -> ImportJob:
    return import_job_create_from_csv(
        file=upload_file(HEADER + "\n" + good_rows(count)), created_by=staff
    )


def confirmed_job(staff, count: int) -> ImportJob:
    job = preview(staff, count)
    import_job_confirm(job=job, confirmed_by=staff)  # tasks run at once in tests
    job.refresh_from_db()
    return job


@pytest.fixture
def confirmed_at_once(monkeypatch):
    """Staff confirm before any of the preview's passwords is hashed."""
    monkeypatch.setattr(imports.services, "enqueue_preview_hashing", lambda job_id: None)


def failing_hash(password):
    raise MemoryError("no memory for Argon2 just now")


def hashing_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "imports.hashing"]


def watch_hashes(monkeypatch) -> list[tuple[str, float]]:
    """Record which thread made each hash, and when."""
    hashes: list[tuple[str, float]] = []
    real_hash = imports.hashing.make_password

    def watched_hash(password):
        hashes.append((threading.current_thread().name, time.monotonic()))
        return real_hash(password)

    monkeypatch.setattr(imports.hashing, "make_password", watched_hash)
    return hashes


def test_a_row_opens_with_its_outcome_its_hash_made_during_the_call(
    staff, upstream, monkeypatch, confirmed_at_once
):
    calls: list[float] = []  # when each call came back
    real_call = PartnerApiClient.create_learner

    def slow_call(self, **kwargs):
        created = real_call(self, **kwargs)
        time.sleep(CALL_SECONDS)  # the answer still on its way
        calls.append(time.monotonic())
        return created

    queued_hashing: list[int] = []
    monkeypatch.setattr(PartnerApiClient, "create_learner", slow_call)
    hashes = watch_hashes(monkeypatch)
    monkeypatch.setattr(imports.rows, "enqueue_row_signin", queued_hashing.append)

    job = confirmed_job(staff, 3)

    assert job.state == ImportJob.State.FINISHED
    assert job.rows.filter(state="registered", signin_ready_at__isnull=False).count() == 3
    assert queued_hashing == []  # no task of its own: each row opened with its outcome
    assert len(calls) == len(hashes) == 3
    for (thread, hashed_at), ended in zip(hashes, calls, strict=True):
        assert thread.startswith("import-hash")
        assert hashed_at < ended  # begun before its call came back, not after it
    for number in range(3):
        assert Client().login(username=f"pupil{number}", password=GOOD_PASSWORD)


def test_a_row_whose_hash_failed_is_made_ready_by_its_own_task(
    staff, upstream, monkeypatch, caplog, confirmed_at_once
):
    monkeypatch.setattr(imports.hashing, "make_password", failing_hash)

    with caplog.at_level("WARNING", logger="imports.hashing"):
        job = confirmed_job(staff, 2)

    assert (
        hashing_warnings(caplog)
        == ["Hashing an imported password failed (MemoryError); queued again"] * 2
    )
    assert GOOD_PASSWORD not in caplog.text

    assert job.state == ImportJob.State.FINISHED
    assert job.rows.filter(state="registered", signin_ready_at__isnull=False).count() == 2
    assert Client().login(username="pupil1", password=GOOD_PASSWORD)
    assert not job.rows.exclude(password_encrypted="").exists()  # wiped once hashed


def test_a_previews_passwords_are_hashed_before_staff_confirm_it(staff, upstream, monkeypatch):
    hashes = watch_hashes(monkeypatch)

    job = preview(staff, 3)  # its hashing tasks run at once in tests

    assert job.state == ImportJob.State.PREVIEW
    kept = list(job.rows.values_list("password_hash", flat=True))
    assert len(kept) == 3 and all(kept)
    assert not any(GOOD_PASSWORD in password_hash for password_hash in kept)
    assert len(hashes) == 3
    hashes.clear()

    import_job_confirm(job=job, confirmed_by=staff)

    job.refresh_from_db()
    assert job.state == ImportJob.State.FINISHED
    assert job.rows.filter(state="registered", signin_ready_at__isnull=False).count() == 3
    assert hashes == []  # none made again while the rows were sent
    assert not job.rows.exclude(password_hash="").exists()  # the accounts hold them now
    for number in range(3):
        assert Client().login(username=f"pupil{number}", password=GOOD_PASSWORD)


def test_a_previews_rows_are_hashed_a_batch_a_task_in_file_order(
    staff, monkeypatch, confirmed_at_once
):
    monkeypatch.setattr(imports.hashing, "PREVIEW_HASH_BATCH", 2)
    job = preview(staff, 5)
    ids = list(job.rows.order_by("row_number").values_list("pk", flat=True))

    assert preview_batches(job.pk) == [ids[0:2], ids[2:4], ids[4:5]]


def test_a_discarded_preview_keeps_no_password_and_no_hash(staff, monkeypatch):
    job = preview(staff, 2)
    assert job.rows.exclude(password_hash="").count() == 2

    import_job_discard(job=job)

    assert job.rows.count() == 2
    assert not job.rows.exclude(password_hash="").exists()
    assert not job.rows.exclude(password_encrypted="").exists()


def test_preview_hashing_leaves_alone_rows_claimed_confirmed_or_discarded_meanwhile(
    staff, monkeypatch, confirmed_at_once
):
    job = preview(staff, 3)
    first, second, third = job.rows.order_by("row_number")
    ImportRow.objects.filter(pk=first.pk).update(state=ImportRow.State.SENDING)
    discarded = preview(staff, 1)
    import_job_discard(job=discarded)
    confirmed = preview(staff, 1)  # its rows are hashed during their calls from now on
    ImportJob.objects.filter(pk=confirmed.pk).update(state=ImportJob.State.RUNNING)
    real_hash = imports.hashing.make_password

    def claimed_while_hashing(password):
        # The third row is claimed by its task while its hash is being made.
        ImportRow.objects.filter(pk=third.pk).update(state=ImportRow.State.SENDING)
        return real_hash(password)

    hashed = preview_passwords_hash(row_ids=[first.pk, second.pk])
    monkeypatch.setattr(imports.hashing, "make_password", claimed_while_hashing)
    others = [
        *discarded.rows.values_list("pk", flat=True),
        *confirmed.rows.values_list("pk", flat=True),
    ]
    hashed += preview_passwords_hash(row_ids=[third.pk, *others])

    assert hashed == 1
    assert list(job.rows.exclude(password_hash="").values_list("pk", flat=True)) == [second.pk]
    assert not discarded.rows.exclude(password_hash="").exists()
    assert confirmed.rows.filter(state="queued").count() == 1
    assert not confirmed.rows.exclude(password_hash="").exists()


def test_a_preview_hash_that_fails_leaves_its_rows_to_their_calls(
    staff, upstream, monkeypatch, caplog
):
    real_hash = imports.hashing.make_password
    monkeypatch.setattr(imports.hashing, "make_password", failing_hash)
    with caplog.at_level("WARNING", logger="imports.hashing"):
        job = preview(staff, 2)

    assert hashing_warnings(caplog) == [
        "Hashing a preview's passwords failed (MemoryError); they are hashed when sent"
    ]
    assert GOOD_PASSWORD not in caplog.text
    assert job.rows.count() == 2 and not job.rows.exclude(password_hash="").exists()

    monkeypatch.setattr(imports.hashing, "make_password", real_hash)
    import_job_confirm(job=job, confirmed_by=staff)

    job.refresh_from_db()
    assert job.rows.filter(state="registered", signin_ready_at__isnull=False).count() == 2
    assert Client().login(username="pupil0", password=GOOD_PASSWORD)
