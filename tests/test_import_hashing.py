"""A bulk registration hashes each row's password while its upstream call is under way."""

import threading
import time

import pytest
from django.test import Client

import imports.hashing
import imports.rows
from imports.models import ImportJob
from imports.services import import_job_confirm, import_job_create_from_csv
from partner_api import PartnerApiClient
from tests.factories import GOOD_PASSWORD, HEADER, good_rows, upload_file

pytestmark = pytest.mark.django_db(transaction=True)

CALL_SECONDS = 0.3  # each upstream call, long enough to see the hash made meanwhile


def confirmed_job(staff, count: int) -> ImportJob:
    job = import_job_create_from_csv(
        file=upload_file(HEADER + "\n" + good_rows(count)), created_by=staff
    )
    import_job_confirm(job=job, confirmed_by=staff)  # tasks run at once in tests
    job.refresh_from_db()
    return job


def test_a_row_opens_with_its_outcome_its_hash_made_during_the_call(staff, upstream, monkeypatch):
    calls: list[float] = []  # when each call came back
    hashes: list[tuple[str, float]] = []
    real_call, real_hash = PartnerApiClient.create_learner, imports.hashing.make_password

    def slow_call(self, **kwargs):
        created = real_call(self, **kwargs)
        time.sleep(CALL_SECONDS)  # the answer still on its way
        calls.append(time.monotonic())
        return created

    def watched_hash(password):
        hashes.append((threading.current_thread().name, time.monotonic()))
        return real_hash(password)

    queued_hashing: list[int] = []
    monkeypatch.setattr(PartnerApiClient, "create_learner", slow_call)
    monkeypatch.setattr(imports.hashing, "make_password", watched_hash)
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
    staff, upstream, monkeypatch, caplog
):
    def failing_hash(password):
        raise MemoryError("no memory for Argon2 just now")

    monkeypatch.setattr(imports.hashing, "make_password", failing_hash)

    with caplog.at_level("WARNING", logger="imports.hashing"):
        job = confirmed_job(staff, 2)

    warnings = [r.getMessage() for r in caplog.records if r.name == "imports.hashing"]
    assert warnings == ["Hashing an imported password failed (MemoryError); queued again"] * 2
    assert GOOD_PASSWORD not in caplog.text

    assert job.state == ImportJob.State.FINISHED
    assert job.rows.filter(state="registered", signin_ready_at__isnull=False).count() == 2
    assert Client().login(username="pupil1", password=GOOD_PASSWORD)
    assert not job.rows.exclude(password_encrypted="").exists()  # wiped once hashed
