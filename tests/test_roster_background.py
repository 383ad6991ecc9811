"""An uploaded roster read by a worker; failures said in a sentence; dead workers' syncs."""

import io
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import OperationalError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import StaffRole
from classes.models import SchoolGroup
from learners.models import Level
from roster.models import RosterSync
from roster.plan import NewClass, SchoolPlan, SyncPlan
from schools.models import School
from tests.factories import make_staff
from tests.roster_files import roster_write, school_spec
from tests.roster_syncs import make_sync

State = RosterSync.State


@pytest.fixture
def admin() -> Client:
    client = Client(raise_request_exception=True)
    client.force_login(make_staff("ada.admin", role=StaffRole.ADMIN))
    return client


def upload_of(tmp_path, pupils: int = 3) -> SimpleUploadedFile:
    zipped = roster_write(school_spec(pupils=pupils, classes=1), tmp_path / "records", as_zip=True)
    return SimpleUploadedFile("records.zip", zipped.read_bytes(), "application/zip")


def kept_uploads(settings) -> list[Path]:
    folder = Path(settings.ROSTER_UPLOAD_DIR)
    return sorted(folder.iterdir()) if folder.exists() else []


@pytest.mark.django_db(transaction=True)
def test_an_upload_is_read_by_the_imports_worker_its_page_waiting_till_then(
    admin, queued_tasks, settings, tmp_path, upstream
):
    response = admin.post(reverse("roster:index"), {"file": upload_of(tmp_path)}, follow=True)

    sync = RosterSync.objects.get()
    body = response.content.decode()
    assert response.status_code == 200 and sync.state == State.READING
    assert "Being read" in body and "refreshes itself" in body
    assert "js/roster_wait.js" in body and 'http-equiv="refresh"' in body
    assert "0 joined" not in body  # nothing is known of its effect yet
    assert [path.name for path in kept_uploads(settings)] == [f"roster-sync-{sync.pk}.zip"]
    (queued,) = queued_tasks.results
    assert queued.task.queue_name == "imports"

    queued.task.call(*queued.args, **queued.kwargs)  # the worker takes it up

    sync.refresh_from_db()
    assert sync.state == State.APPLIED and sync.joined == 3, sync.summary_line()
    assert kept_uploads(settings) == []  # deleted once read
    page = admin.get(reverse("roster:sync", args=[sync.pk])).content.decode()
    assert "3 joined, 0 left" in page and "Being read" not in page
    assert "js/roster_wait.js" not in page
    # Taken up twice (a retried task): nothing more happens.
    queued.task.call(*queued.args, **queued.kwargs)
    (job,) = sync.import_jobs.all()
    assert job.rows.count() == 3


@pytest.mark.django_db(transaction=True)
def test_a_failure_of_the_portals_while_planning_an_upload_is_said_never_a_500(
    admin, tmp_path, monkeypatch, caplog, settings
):
    def broken(*args, **kwargs):
        raise RuntimeError("a bug naming Ada Pupil")

    monkeypatch.setattr("roster.services.plan_sync", broken)

    response = admin.post(reverse("roster:index"), {"file": upload_of(tmp_path)}, follow=True)

    body = response.content.decode()
    sync = RosterSync.objects.get()
    assert response.status_code == 200 and sync.state == State.FAILED
    assert "The files could not be read" in body and "failed unexpectedly" in body
    assert "Ada Pupil" not in body and "Ada Pupil" in caplog.text
    assert kept_uploads(settings) == []


@pytest.mark.django_db
def test_an_upload_the_portal_cannot_keep_fails_with_a_sentence(admin, settings, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the folder should be")
    settings.ROSTER_UPLOAD_DIR = str(blocker / "uploads")

    response = admin.post(reverse("roster:index"), {"file": upload_of(tmp_path)}, follow=True)

    assert response.status_code == 200
    assert RosterSync.objects.get().state == State.FAILED
    assert "could not keep the uploaded file" in response.content.decode()


# sweep_roster: the syncs a dead worker left -----------------------------------------------------


def aged(sync: RosterSync, minutes: int, **fields) -> RosterSync:
    then = timezone.now() - timedelta(minutes=minutes)
    RosterSync.objects.filter(pk=sync.pk).update(created_at=then, **fields)
    sync.refresh_from_db()
    return sync


@pytest.mark.django_db
def test_the_sweep_fails_a_sync_its_worker_left_being_read_and_deletes_its_zip(settings):
    dead = aged(
        make_sync(state=State.READING), 11, started_at=timezone.now() - timedelta(minutes=11)
    )
    queued = aged(make_sync(state=State.READING), 2)  # still waiting for a worker
    left = Path(settings.ROSTER_UPLOAD_DIR)
    left.mkdir(parents=True, exist_ok=True)
    (left / f"roster-sync-{dead.pk}.zip").write_bytes(b"PK")
    out = io.StringIO()

    call_command("sweep_roster", stdout=out)

    dead.refresh_from_db()
    queued.refresh_from_db()
    assert dead.state == State.FAILED and "stopped while reading" in dead.error
    assert queued.state == State.READING
    assert not (left / f"roster-sync-{dead.pk}.zip").exists()
    assert f"roster sync {dead.pk}: failed" in out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_the_sweep_applies_again_a_sync_its_worker_left_being_applied():
    school = School.default()
    new = NewClass("class-8b", "8B", SchoolGroup.Kind.TEACHING_CLASS, Level.SECONDARY, "2026/27")
    plan = SyncPlan(
        schools=[
            SchoolPlan(school_id=school.pk, code=school.code, name=school.name, new_classes=[new])
        ]  # fmt: skip
    )
    stuck = RosterSync.objects.create(
        origin=RosterSync.Origin.COMMAND, state=State.APPLYING, plan=plan.to_json(),
        decided_at=timezone.now() - timedelta(minutes=11),
    )  # fmt: skip
    recent = aged(make_sync(state=State.APPLYING), 1)  # its worker may still be at it
    out = io.StringIO()

    call_command("sweep_roster", stdout=out)
    call_command("sweep_roster", stdout=out)  # applied once: nothing left to take up

    stuck.refresh_from_db()
    recent.refresh_from_db()
    assert stuck.state == State.APPLIED and stuck.applied_at is not None
    assert SchoolGroup.objects.filter(name="8B", archived_at__isnull=True).count() == 1
    assert recent.state == State.APPLYING
    assert out.getvalue().splitlines() == [stuck.summary_line(), "Nothing to do."]


# Approving and discarding when the database fails ----------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("action", ["roster:approve", "roster:discard"])
def test_a_database_failure_while_deciding_is_said_and_changes_nothing(admin, monkeypatch, action):
    sync = make_sync(state=State.HELD)

    def locked(*args, **kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr("roster.services.audit_record", locked)

    response = admin.post(reverse(action, args=[sync.pk]))

    assert response.status_code == 302
    assert response.url == reverse("roster:sync", args=[sync.pk])
    said = [str(message) for message in get_messages(response.wsgi_request)]
    assert said == ["The portal could not reach its database just now: nothing was changed. "
                    "Try again in a minute."]  # fmt: skip
    sync.refresh_from_db()
    assert sync.state == State.HELD


@pytest.mark.django_db(transaction=True)
def test_a_sync_approved_on_its_page_is_applied_by_a_worker_never_in_the_request(
    admin, queued_tasks
):
    held = make_sync(state=State.HELD, problems=0, joiners=2)

    response = admin.post(reverse("roster:approve", args=[held.pk]), follow=True)

    body = response.content.decode()
    held.refresh_from_db()
    assert response.status_code == 200 and held.state == State.APPLYING
    assert "Being applied" in body and "This page shows when it is done" in body
    applying = [r for r in queued_tasks.results if r.task.name == "apply_approved_roster"]
    assert len(applying) == 1 and applying[0].task.queue_name == "imports"

    applying[0].task.call(*applying[0].args, **applying[0].kwargs)  # the worker takes it up

    held.refresh_from_db()
    assert held.state == State.APPLIED and held.applied_at is not None
    assert "Being applied" not in admin.get(reverse("roster:sync", args=[held.pk])).content.decode()


@pytest.mark.django_db(transaction=True)
def test_a_sync_approved_for_a_worker_fails_if_another_was_applied_before_it_ran(
    admin, queued_tasks
):
    first = make_sync(state=State.HELD, problems=0, joiners=1, tag=" first")
    second = make_sync(state=State.HELD, problems=0, joiners=1, tag=" second")
    admin.post(reverse("roster:approve", args=[first.pk]))
    (applying,) = [r for r in queued_tasks.results if r.task.name == "apply_approved_roster"]

    call_command("roster_sync", "--approve", str(second.pk), stdout=io.StringIO())
    applying.task.call(*applying.args, **applying.kwargs)

    first.refresh_from_db()
    second.refresh_from_db()
    assert second.state == State.APPLIED
    assert first.state == State.FAILED
    assert "Another sync was applied after this one was read" in first.error
