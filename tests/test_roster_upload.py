"""Uploading the school's records and the drop folder's sweep, through the real services.

These call roster.services (the services' change): they run once the roster's parts are merged.
"""

import io
import os
import time
import zipfile

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from accounts.models import StaffRole
from classes.models import SchoolGroup
from roster.models import RosterSync
from tests.factories import make_staff
from tests.roster_files import roster_write, school_spec
from tests.roster_syncs import make_sync

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def admin_user():
    return make_staff("ada.admin", role=StaffRole.ADMIN)


@pytest.fixture
def admin(admin_user) -> Client:
    client = Client(raise_request_exception=True)
    client.force_login(admin_user)
    return client


def test_an_uploaded_zip_is_synced_and_its_page_shown(admin, admin_user, upstream, tmp_path):
    zipped = roster_write(school_spec(pupils=4, classes=2), tmp_path / "records", as_zip=True)
    upload = SimpleUploadedFile("records.zip", zipped.read_bytes(), "application/zip")

    response = admin.post(reverse("roster:index"), {"file": upload}, follow=True)

    sync = RosterSync.objects.get()
    assert response.redirect_chain[0] == (reverse("roster:sync", args=[sync.pk]), 302)
    assert response.status_code == 200
    assert sync.origin == RosterSync.Origin.UPLOAD and sync.filename == "records.zip"
    assert sync.created_by == admin_user
    assert sync.joined == 4, sync.summary_line()
    assert "4 joined, 0 left" in response.content.decode()


def test_a_zip_that_is_no_roster_fails_with_a_reason_never_a_500(admin, tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", "not a roster")
    upload = SimpleUploadedFile("wrong.zip", buffer.getvalue(), "application/zip")

    response = admin.post(reverse("roster:index"), {"file": upload}, follow=True)

    assert response.status_code == 200
    sync = RosterSync.objects.get()
    assert sync.state == RosterSync.State.FAILED
    assert "The files could not be read" in response.content.decode()


@pytest.mark.parametrize("action", ["roster:approve", "roster:discard"])
def test_deciding_a_sync_that_is_not_held_says_so_and_changes_nothing(admin, action):
    sync = make_sync(state=RosterSync.State.APPLIED)

    response = admin.post(reverse(action, args=[sync.pk]))

    assert response.status_code == 302
    assert response.url == reverse("roster:sync", args=[sync.pk])
    messages = [str(m) for m in get_messages(response.wsgi_request)]
    assert len(messages) == 1 and messages[0]
    sync.refresh_from_db()
    assert sync.state == RosterSync.State.APPLIED


def test_discarding_a_held_sync_applies_nothing(admin):
    sync = make_sync(state=RosterSync.State.HELD)

    response = admin.post(reverse("roster:discard", args=[sync.pk]), follow=True)

    assert "Discarded" in response.content.decode()
    sync.refresh_from_db()
    assert sync.state == RosterSync.State.DISCARDED


def test_the_drop_folders_sweep_syncs_a_dropped_zip_once(settings, tmp_path, upstream):
    settings.ROSTER_DROP_DIR = str(tmp_path / "drop")
    (tmp_path / "drop").mkdir()
    roster_write(school_spec(pupils=3, classes=1), tmp_path / "drop" / "nightly", as_zip=True)
    an_hour_ago = time.time() - 3600
    os.utime(tmp_path / "drop" / "nightly.zip", (an_hour_ago, an_hour_ago))
    out = io.StringIO()

    call_command("sweep_roster", stdout=out)
    call_command("sweep_roster", stdout=out)

    sync = RosterSync.objects.get()
    assert sync.origin == RosterSync.Origin.DROP and sync.filename == "nightly.zip"
    assert out.getvalue().splitlines() == [sync.summary_line(), "Nothing to do."]
    assert sync.summary_line().endswith("3 joined, 0 left, 0 changed, 0 problems")
    assert [p.name.endswith("-nightly.zip") for p in (tmp_path / "drop" / "taken").iterdir()] == [
        True
    ]


def upload_of(spec, folder, name: str = "records.zip") -> SimpleUploadedFile:
    zipped = roster_write(spec, folder / name.removesuffix(".zip"), as_zip=True)
    return SimpleUploadedFile(name, zipped.read_bytes(), "application/zip")


def test_a_sync_losing_many_pupils_is_held_then_approved_from_its_page(admin, upstream, tmp_path):
    spec = school_spec(pupils=10, classes=2)
    admin.post(reverse("roster:index"), {"file": upload_of(spec, tmp_path, "monday.zip")})
    missing = [pupil.sourced_id for pupil in spec.pupils[:4]]

    response = admin.post(
        reverse("roster:index"),
        {"file": upload_of(spec.without(*missing), tmp_path, "tuesday.zip")},
        follow=True,
    )

    held = RosterSync.objects.get(filename="tuesday.zip")
    body = response.content.decode()
    assert held.state == RosterSync.State.HELD, held.summary_line()
    assert "Held: nothing has changed yet" in body and "4 left" in body
    assert reverse("roster:approve", args=[held.pk]) in body
    approved = admin.post(reverse("roster:approve", args=[held.pk]), follow=True)
    held.refresh_from_db()
    assert held.state == RosterSync.State.APPLIED
    assert "Approved" in approved.content.decode()
    assert reverse("roster:approve", args=[held.pk]) not in approved.content.decode()


def test_the_slips_of_a_synced_class_print_its_registered_pupils_once(admin, upstream, tmp_path):
    spec = school_spec(pupils=3, classes=1)
    admin.post(reverse("roster:index"), {"file": upload_of(spec, tmp_path)})
    sync = RosterSync.objects.get()
    slips_url = reverse("roster:slips", args=[sync.pk])

    listing = admin.get(slips_url).content.decode()

    class_name = spec.classes[0].title
    assert f"Print slips for {class_name}" in listing, listing
    group = SchoolGroup.objects.get(name=class_name, archived_at__isnull=True)
    printed = admin.post(slips_url, {"group": group.pk}).content.decode()
    assert printed.count('class="password-slip"') == 3
    assert spec.pupils[0].login in printed
    assert "No slips are waiting" in admin.get(slips_url).content.decode()
