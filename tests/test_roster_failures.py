"""Roster syncs that fail in a worker or the sweep: never stuck, never overwritten, said plainly."""

import io
import os
import stat
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, connection, connections
from django.test import Client
from django.urls import reverse
from django.utils import timezone

import roster.services
from accounts.models import StaffRole
from audit.models import AuditEvent
from learners.models import Learner
from roster.models import RosterSync
from tests.factories import make_staff
from tests.roster_files import roster_write, school_spec
from tests.roster_syncs import make_sync

State = RosterSync.State
AN_HOUR_AGO = time.time() - 3600


@pytest.fixture
def admin() -> Client:
    client = Client(raise_request_exception=True)
    client.force_login(make_staff("ada.admin", role=StaffRole.ADMIN))
    return client


def break_applying(monkeypatch, *, only: int | None = None) -> None:
    """Make applying a plan hit a unique constraint (a class staff made by hand), as if renamed."""
    real = roster.services.plan_apply

    def clashing(*, sync, **kwargs):
        if only is None or sync.pk == only:
            raise IntegrityError("UNIQUE constraint failed: classes_schoolgroup.name (8B)")
        return real(sync=sync, **kwargs)

    monkeypatch.setattr("roster.services.plan_apply", clashing)


def run(queued) -> None:
    queued.task.call(*queued.args, **queued.kwargs)


def upload_of(tmp_path, pupils: int = 3) -> SimpleUploadedFile:
    zipped = roster_write(school_spec(pupils=pupils, classes=1), tmp_path / "records", as_zip=True)
    return SimpleUploadedFile("records.zip", zipped.read_bytes(), "application/zip")


# 1. A failure while a worker or the sweep applies an approved sync -----------------------------


@pytest.mark.django_db(transaction=True)
def test_an_approved_sync_failing_in_its_worker_is_failed_not_left_applying(
    admin, queued_tasks, monkeypatch, caplog
):
    held = make_sync(state=State.HELD, problems=0, joiners=2)
    admin.post(reverse("roster:approve", args=[held.pk]))
    (applying,) = [r for r in queued_tasks.results if r.task.name == "apply_approved_roster"]
    break_applying(monkeypatch)

    run(applying)  # the worker takes it up: no exception escapes

    held.refresh_from_db()
    assert held.state == State.FAILED and "failed unexpectedly" in held.error
    assert "UNIQUE constraint failed" in caplog.text  # logged for the administrators
    response = admin.get(reverse("roster:sync", args=[held.pk]))
    body = response.content.decode()
    assert response.status_code == 200 and "It could not be applied" in body
    assert "failed unexpectedly" in body and "UNIQUE" not in body
    assert "Being applied" not in body and "js/roster_wait.js" not in body
    assert not Learner.objects.filter(username__startswith="joiner").exists()


@pytest.mark.django_db(transaction=True)
def test_a_sync_failing_when_the_sweep_applies_it_again_never_stops_the_drop_folder(
    settings, tmp_path, monkeypatch
):
    stuck = make_sync(state=State.APPLYING, problems=0, joiners=2)
    RosterSync.objects.filter(pk=stuck.pk).update(decided_at=timezone.now() - timedelta(minutes=11))
    break_applying(monkeypatch, only=stuck.pk)
    settings.ROSTER_DROP_DIR = str(tmp_path / "drop")
    (tmp_path / "drop").mkdir()
    dropped = roster_write(school_spec(pupils=3, classes=1), tmp_path / "drop" / "mon", as_zip=True)
    os.utime(dropped, (AN_HOUR_AGO, AN_HOUR_AGO))
    out = io.StringIO()

    call_command("sweep_roster", stdout=out)

    stuck.refresh_from_db()
    assert stuck.state == State.FAILED and "failed unexpectedly" in stuck.error
    taken = RosterSync.objects.get(origin=RosterSync.Origin.DROP)
    assert taken.state == State.APPLIED and taken.joined == 3, taken.summary_line()
    assert out.getvalue().splitlines() == [stuck.summary_line(), taken.summary_line()]
    assert not dropped.exists()


# 2. A sync the sweep failed while its worker waited is never applied after all -----------------


@pytest.mark.backend  # SQLite's write lock keeps the sweep out till the worker commits
@pytest.mark.django_db(transaction=True)
def test_a_sync_the_sweep_failed_meanwhile_is_left_failed_and_nothing_applied(
    tmp_path, monkeypatch
):
    if connection.vendor != "postgresql":
        pytest.skip("only PostgreSQL lets the sweep write the sync while its worker plans it")
    real = roster.services.plan_sync
    stopped = "The portal stopped while reading these files; nothing changed. Send them again."

    def sweep() -> None:
        try:
            RosterSync.objects.filter(state=State.READING).update(state=State.FAILED, error=stopped)
        finally:
            connections.close_all()

    def swept_meanwhile(*args, **kwargs):
        plan = real(*args, **kwargs)
        # The sweep, on its own connection, after the worker's check: it looked dead.
        sweeper = threading.Thread(target=sweep)
        sweeper.start()
        sweeper.join(timeout=30)
        return plan

    monkeypatch.setattr("roster.services.plan_sync", swept_meanwhile)
    folder = roster_write(school_spec(pupils=3, classes=1), tmp_path / "records")

    sync = roster.services.roster_sync_start(source=folder, origin=RosterSync.Origin.COMMAND)

    assert sync.state == State.FAILED and sync.error == stopped
    assert sync.applied_at is None
    assert Learner.objects.count() == 0
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.ROSTER_SYNCED).exists()


# 3. An approved sync another sync made out of date ------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_stale_approved_sync_is_audited_and_says_why_on_its_page(admin, queued_tasks):
    first = make_sync(state=State.HELD, problems=0, joiners=1, tag=" first")
    second = make_sync(state=State.HELD, problems=0, joiners=1, tag=" second")
    admin.post(reverse("roster:approve", args=[first.pk]))
    (applying,) = [r for r in queued_tasks.results if r.task.name == "apply_approved_roster"]
    call_command("roster_sync", "--approve", str(second.pk), stdout=io.StringIO())

    run(applying)

    first.refresh_from_db()
    assert first.state == State.FAILED
    (event,) = AuditEvent.objects.filter(action=AuditEvent.Action.ROSTER_STALE)
    assert event.detail["roster_sync"] == first.pk
    assert event.actor.username == "ada.admin"
    response = admin.get(reverse("roster:sync", args=[first.pk]))
    body = response.content.decode()
    assert response.status_code == 200 and "It could not be applied" in body
    assert "Another sync was applied after this one was read" in body
    assert "The files could not be read" not in body


# 4. A duplicate delivery of the upload task ----------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_duplicate_delivery_leaves_the_zip_to_the_worker_that_claimed_it(
    admin, queued_tasks, settings, tmp_path
):
    settings.ROSTER_UPLOAD_DIR = str(tmp_path / "uploads")  # the zip stays: the test's own
    admin.post(reverse("roster:index"), {"file": upload_of(tmp_path)})
    sync = RosterSync.objects.get()
    (reading,) = queued_tasks.results
    kept = Path(settings.ROSTER_UPLOAD_DIR) / f"roster-sync-{sync.pk}.zip"
    assert kept.exists()
    # Another worker took it up a moment ago and is reading the zip now.
    RosterSync.objects.filter(pk=sync.pk).update(started_at=timezone.now())

    run(reading)  # the same task, delivered twice

    sync.refresh_from_db()
    assert sync.state == State.READING
    assert kept.exists()


# 5. Small things: the command's sentence, the upload folder's modes ---------------------------


@pytest.mark.django_db(transaction=True)
def test_the_command_says_a_failure_of_the_portals_is_not_the_databases(monkeypatch):
    held = make_sync(state=State.HELD, problems=0, joiners=1)
    break_applying(monkeypatch)

    with pytest.raises(CommandError) as failed:
        call_command("roster_sync", "--approve", str(held.pk), stdout=io.StringIO())

    said = str(failed.value)
    assert "failed unexpectedly" in said and "administrators" in said
    assert "busy, locked" not in said and "UNIQUE" not in said
    held.refresh_from_db()
    assert held.state == State.HELD


@pytest.mark.django_db
def test_uploads_are_kept_for_the_portals_user_only(
    admin, queued_tasks, settings, tmp_path, monkeypatch
):
    folder = tmp_path / "uploads"
    settings.ROSTER_UPLOAD_DIR = str(folder)
    leftover = folder / "kept.zip"
    monkeypatch.setattr("roster.background.upload_path", lambda sync_id: leftover)
    folder.mkdir(mode=0o700)
    leftover.write_bytes(b"an older, longer file left behind" * 100)
    leftover.chmod(0o644)
    upload = upload_of(tmp_path)

    response = admin.post(reverse("roster:index"), {"file": upload}, follow=True)

    assert response.status_code == 200 and RosterSync.objects.get().state == State.READING
    assert stat.S_IMODE(leftover.stat().st_mode) == 0o600
    upload.seek(0)
    assert leftover.read_bytes() == upload.read()


@pytest.mark.django_db
def test_the_upload_folder_is_made_for_the_portals_user_only(
    admin, queued_tasks, settings, tmp_path
):
    folder = tmp_path / "made" / "uploads"
    settings.ROSTER_UPLOAD_DIR = str(folder)

    response = admin.post(reverse("roster:index"), {"file": upload_of(tmp_path)}, follow=True)

    assert response.status_code == 200 and RosterSync.objects.get().state == State.READING
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    (kept,) = folder.iterdir()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
