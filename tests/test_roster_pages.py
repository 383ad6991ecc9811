"""The admins' roster pages: the list and upload form, a sync's preview, its file, grades, slips."""

import csv
import html
import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from accounts.access import ALL_SCHOOLS
from accounts.models import StaffRole
from accounts.school_choice import SESSION_KEY
from audit.models import AuditEvent
from classes.models import SchoolGroup
from imports.models import ImportRow
from roster import background
from roster.models import RosterSync
from schools.models import PartnerSettings, School
from tests.factories import make_group, make_staff
from tests.roster_syncs import HOLD_REASON, make_sync, registered_with_slips

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin() -> Client:
    client = Client(raise_request_exception=True)
    client.force_login(make_staff("ada.admin", role=StaffRole.ADMIN))
    return client


def text(response) -> str:
    """Return the page's text as a reader meets it (entities as their characters)."""
    return html.unescape(response.content.decode())


# The list and the upload form -----------------------------------------------------------------


def test_the_list_shows_each_sync_newest_first_with_its_counts_and_a_held_marker(admin):
    make_sync(state=RosterSync.State.APPLIED, filename="monday.zip")
    make_sync(state=RosterSync.State.HELD, filename="tuesday.zip")

    response = admin.get(reverse("roster:index"))

    body = text(response)
    assert response.status_code == 200
    assert body.index("tuesday.zip") < body.index("monday.zip")
    assert "Held: waiting for you" in body
    assert "4 joined, 2 left, 1 changed, 2 problems" in body
    assert reverse("roster:grades") in body
    assert "drop folder" not in body  # ROSTER_DROP_DIR unset
    # One school: nothing about schools.
    assert "All schools" not in body and "Our school" not in body


def test_the_list_names_the_drop_folder_when_there_is_one(admin, settings, tmp_path):
    settings.ROSTER_DROP_DIR = str(tmp_path)

    body = text(admin.get(reverse("roster:index")))

    assert "drop folder" in body and str(tmp_path) in body


def test_the_list_is_paginated(admin):
    for number in range(27):
        make_sync(state=RosterSync.State.APPLIED, filename=f"file{number:02d}.zip", problems=0)

    first = text(admin.get(reverse("roster:index")))
    second = text(admin.get(reverse("roster:index") + "?page=2"))

    assert "file26.zip" in first and "file00.zip" not in first
    assert "file00.zip" in second and "Page 2 of 2" in second


@pytest.mark.parametrize(
    ("upload", "message"),
    [
        (None, "Choose a zip file to upload."),
        (SimpleUploadedFile("users.csv", b"sourcedId\n1\n", "text/csv"), "is not a zip file"),
        (SimpleUploadedFile("empty.zip", b"", "application/zip"), "The file is empty"),
    ],
    ids=["missing", "not a zip", "empty"],
)
def test_a_bad_upload_shows_the_page_again_with_its_error(admin, upload, message):
    data = {"file": upload} if upload is not None else {}

    response = admin.post(reverse("roster:index"), data)

    assert response.status_code == 200
    assert message in text(response)
    assert "There is a problem" in text(response)
    assert not RosterSync.objects.exists()


def test_an_upload_over_the_limit_is_refused_with_the_limit(admin, settings):
    settings.ROSTER_MAX_UPLOAD_BYTES = 100
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("manifest.csv", "propertyName,value\n" + "x" * 500)
    upload = SimpleUploadedFile("big.zip", zipped.getvalue(), "application/zip")

    response = admin.post(reverse("roster:index"), {"file": upload})

    assert response.status_code == 200
    assert "the most the portal takes is 100\xa0bytes" in text(response)
    assert not RosterSync.objects.exists()


def a_zip() -> SimpleUploadedFile:
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("manifest.csv", "propertyName,value\n")
    return SimpleUploadedFile("records.zip", zipped.getvalue(), "application/zip")


@pytest.fixture
def started(monkeypatch):
    """Record what the worker's task hands the service: the upload's sync and its kept zip."""
    calls = []

    def run(sync, source, *, actor, address):
        calls.append(
            {
                "origin": sync.origin,
                "filename": sync.filename,
                "school": sync.school,
                "started_by": actor,
                "source": source,
                "data": source.read_bytes(),
            }
        )
        return sync

    monkeypatch.setattr(background, "roster_sync_run", run)
    return calls


def test_an_upload_hands_the_zip_to_the_service_and_shows_the_sync(admin, started):
    response = admin.post(reverse("roster:index"), {"file": a_zip()})

    sync = RosterSync.objects.get()
    assert response.status_code == 302 and response.url == reverse("roster:sync", args=[sync.pk])
    (call,) = started
    assert call["origin"] == RosterSync.Origin.UPLOAD and call["filename"] == "records.zip"
    assert call["school"] is None  # one school: every school the file names
    assert call["data"].startswith(b"PK")
    assert call["started_by"].username == "ada.admin"
    assert not call["source"].exists()  # the kept copy is gone once read


def test_a_school_admins_upload_is_for_their_school_a_trust_admins_for_all(started):
    alpha = School.default()
    School.objects.create(code="BRAVO", name="Bravo Academy")
    client = Client()
    client.force_login(make_staff("alma.admin", role=StaffRole.ADMIN, school=alpha))
    trust = Client()
    trust.force_login(make_staff("tia.trust", role=StaffRole.TRUST_ADMIN))
    session = trust.session
    session[SESSION_KEY] = ALL_SCHOOLS
    session.save()

    client.post(reverse("roster:index"), {"file": a_zip()})
    listing = trust.get(reverse("roster:index"))
    trust.post(reverse("roster:index"), {"file": a_zip()})

    assert [call["school"] for call in started] == [alpha, None]
    assert "updates every school it names" in text(listing)


def test_the_staff_navigation_links_the_school_records_for_admins_only(admin):
    teacher = Client()
    teacher.force_login(make_staff("tom.teacher", role=StaffRole.TEACHER))

    assert "School records" in text(admin.get(reverse("dashboard:home")))
    page = teacher.get(reverse("dashboard:home"))
    assert page.status_code == 200 and "Dashboard" in text(page)
    assert "School records" not in text(page)


# A sync's page ----------------------------------------------------------------------------------


def test_a_held_sync_shows_its_reasons_first_then_counts_names_problems_and_buttons(admin):
    sync = make_sync(state=RosterSync.State.HELD, joiners=60)

    response = admin.get(reverse("roster:sync", args=[sync.pk]))

    body = text(response)
    assert response.status_code == 200
    assert HOLD_REASON in body
    assert body.index(HOLD_REASON) < body.index("Joining: 60")
    assert "Jo Joiner0 (joiner0)" in body and "Leo Leaver1" in body and "Ruby Returner" in body
    assert "Cara Changer: Primary to Secondary" in body and "Cara Changer: last name" in body
    assert "7A (Teaching class, Secondary, 2026/27)" in body and "6Z (2025/26)" in body
    assert "Tess Teacher (tess@school.example)" in body
    # 60 joiners: 50 shown, the rest in the file.
    assert "Jo Joiner49" in body and "Jo Joiner50" not in body
    assert "And 10 more: the result file has every one." in body
    assert "users.csv" in body and "The birthDate is missing." in body
    assert reverse("roster:approve", args=[sync.pk]) in body
    assert reverse("roster:discard", args=[sync.pk]) in body


def test_an_applied_sync_has_no_buttons_and_links_its_registration(admin):
    sync = make_sync(state=RosterSync.State.APPLIED)
    registered_with_slips(sync, [make_group("7A")])

    body = text(admin.get(reverse("roster:sync", args=[sync.pk])))

    assert "Applied" in body
    assert reverse("imports:job", args=[sync.import_jobs.get().pk]) in body
    assert reverse("roster:slips", args=[sync.pk]) in body
    assert reverse("roster:approve", args=[sync.pk]) not in body
    assert HOLD_REASON not in body


def test_a_failed_sync_says_why(admin):
    sync = RosterSync.objects.create(
        origin=RosterSync.Origin.UPLOAD,
        filename="broken.zip",
        state=RosterSync.State.FAILED,
        error="manifest.csv is missing from the zip.",
    )

    body = text(admin.get(reverse("roster:sync", args=[sync.pk])))

    assert "The files could not be read" in body and "manifest.csv is missing" in body


def test_the_result_file_has_every_entry_and_problem_safely(admin):
    sync = make_sync(state=RosterSync.State.HELD, joiners=60)
    sync.plan["schools"][0]["leavers"][0]["name"] = "=HYPERLINK(1)"
    sync.save(update_fields=["plan"])

    response = admin.get(reverse("roster:result", args=[sync.pk]))

    rows = list(csv.reader(io.StringIO(response.getvalue().decode("utf-8-sig"))))
    assert response.status_code == 200
    assert rows[0] == ["school", "what", "name", "sourcedId", "detail", "file", "line", "reason"]
    whats = [row[1] for row in rows[1:]]
    assert whats.count("joining") == 60 and whats.count("problem") == 2
    assert whats.count("leaving") == 2 and "class archived" in whats and "staff" in whats
    problem = next(row for row in rows if row[1] == "problem")
    assert problem[5:] == ["users.csv", "2", "The birthDate is missing."]
    # A name starting with a formula sign is text.
    assert rows[1 + 60 + 1][:4] == ["Our school", "leaving", "'=HYPERLINK(1)", "s-l0"]


# Grades ------------------------------------------------------------------------------------------


def test_the_grades_page_shows_the_defaults_and_saves_a_table_audited(admin):
    page = admin.get(reverse("roster:grades"))
    assert page.status_code == 200
    assert "Year 7 to Year 13" in text(page) and "06 to 12" in text(page)

    response = admin.post(
        reverse("roster:grades"),
        {"roster_grade_levels": "Y6 = secondary\nS1 = Secondary", "roster_made_passwords": "on"},
        follow=True,
    )

    assert "Saved." in text(response)
    saved = PartnerSettings.of(School.default().pk)
    assert saved.roster_grade_levels == "Y6 = secondary\nS1 = Secondary"
    assert saved.roster_made_passwords is True and saved.roster_further_education is False
    event = AuditEvent.objects.get(action=AuditEvent.Action.ROSTER_GRADES_CHANGED)
    assert event.detail["roster_grade_levels"].startswith("Y6")


def test_a_grades_table_with_a_bad_line_is_refused_by_line(admin):
    response = admin.post(
        reverse("roster:grades"), {"roster_grade_levels": "Y7 = secondary\nY8 is big"}
    )

    assert response.status_code == 200
    assert "Line 2 (“Y8 is big”) is not “grade = level”" in text(response)
    assert PartnerSettings.of(School.default().pk).roster_grade_levels == ""
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.ROSTER_GRADES_CHANGED).exists()


def test_an_empty_post_to_grades_changes_nothing(admin):
    PartnerSettings.objects.filter(school=School.default()).update(roster_made_passwords=True)

    response = admin.post(reverse("roster:grades"))

    assert response.status_code == 200
    assert "Nothing was saved" in text(response)
    assert PartnerSettings.of(School.default().pk).roster_made_passwords is True


# Slips -------------------------------------------------------------------------------------------


def test_a_classs_slips_print_once_then_are_gone(admin):
    sync = make_sync(state=RosterSync.State.APPLIED)
    form_7a = make_group("7A")
    year_7 = make_group("Year 7", kind=SchoolGroup.Kind.YEAR_GROUP)
    registered_with_slips(sync, [form_7a, year_7])
    slips_url = reverse("roster:slips", args=[sync.pk])

    listing = text(admin.get(slips_url))
    assert "Print slips for 7A" in listing
    assert "Print slips for Year 7" not in listing
    assert "until 60 minutes after the registration finished" in listing

    printed = admin.post(slips_url, {"group": form_7a.pk})

    body = text(printed)
    assert printed.status_code == 200
    assert "Slip-pass-1230" in body and "Slip-pass-1231" in body
    assert "slip.pupil0" in body and "Sid Slip0" in body
    assert "http://testserver/accounts/login/" in body
    assert not ImportRow.objects.exclude(password_encrypted="").exists()
    event = AuditEvent.objects.get(action=AuditEvent.Action.ROSTER_SLIPS_PRINTED)
    assert event.detail == {"roster_sync": sync.pk, "group": form_7a.pk, "slips": 2}
    assert "Slip-pass" not in str(event.detail)

    again = admin.post(slips_url, {"group": form_7a.pk}, follow=True)
    assert again.redirect_chain == [(slips_url, 302)]
    assert "Choose a class from the list" in text(again)
    assert "No slips are waiting" in text(again)


def test_a_hand_uploaded_file_named_like_the_syncs_job_is_not_the_syncs(admin):
    sync = make_sync(state=RosterSync.State.APPLIED)
    form_7a = make_group("7A")
    registered_with_slips(sync, [form_7a], linked=False, filename=f"roster sync {sync.pk}")
    slips_url = reverse("roster:slips", args=[sync.pk])

    listing = admin.get(slips_url)
    page = admin.get(reverse("roster:sync", args=[sync.pk]))
    printed = admin.post(slips_url, {"group": form_7a.pk}, follow=True)

    assert listing.status_code == 200 and "No slips are waiting" in text(listing)
    assert "Print slips for 7A" not in text(listing)
    assert "Applied" in text(page) and "Registering the new pupils" not in text(page)
    assert "Choose a class from the list" in text(printed)
    assert ImportRow.objects.exclude(password_encrypted="").count() == 2  # not wiped


def test_a_slips_post_without_a_class_goes_back_to_the_list(admin):
    sync = make_sync(state=RosterSync.State.APPLIED)
    registered_with_slips(sync, [make_group("7A")])
    url = reverse("roster:slips", args=[sync.pk])

    response = admin.post(url, {"group": "nonsense"})

    assert response.status_code == 302 and response.url == url
    assert ImportRow.objects.exclude(password_encrypted="").count() == 2


def test_expired_passwords_leave_no_slips(admin, settings):
    settings.IMPORT_CREDENTIALS_TTL = 0
    sync = make_sync(state=RosterSync.State.APPLIED)
    registered_with_slips(sync, [make_group("7A")])

    body = text(admin.get(reverse("roster:slips", args=[sync.pk])))

    assert "No slips are waiting" in body
    assert not ImportRow.objects.exclude(password_encrypted="").exists()


# Who sees which sync ----------------------------------------------------------------------------


def school_admin_of(school: School) -> Client:
    client = Client(raise_request_exception=True)
    client.force_login(
        make_staff(f"admin.{school.code.lower()}", role=StaffRole.ADMIN, school=school)
    )
    return client


def test_a_school_admin_sees_their_schools_syncs_and_their_part_of_a_trust_wide_one():
    alpha = School.default()
    bravo = School.objects.create(code="BRAVO", name="Bravo Academy")
    own = make_sync(school=alpha, filename="alpha.zip")
    others = make_sync(school=bravo, schools=[bravo], filename="bravo.zip")
    trust_wide = make_sync(schools=[alpha, bravo], filename="trust.zip")
    bravos_only = make_sync(schools=[bravo], filename="bravo-drop.zip")
    client = school_admin_of(alpha)

    listing = text(client.get(reverse("roster:index")))

    assert "alpha.zip" in listing and "trust.zip" in listing
    assert "bravo.zip" not in listing and "bravo-drop.zip" not in listing
    assert "The file updates Our school only" in listing
    assert client.get(reverse("roster:sync", args=[own.pk])).status_code == 200
    for hidden in (others, bravos_only):
        assert client.get(reverse("roster:sync", args=[hidden.pk])).status_code == 404
        assert client.post(reverse("roster:approve", args=[hidden.pk])).status_code == 404
        assert client.get(reverse("roster:result", args=[hidden.pk])).status_code == 404

    trust = Client()
    trust.force_login(make_staff("tia.trust", role=StaffRole.TRUST_ADMIN))
    page = text(trust.get(reverse("roster:sync", args=[trust_wide.pk])))
    assert "Bravo Academy" in page and "Every school the files name" in page


def test_a_school_admin_reads_only_their_part_of_a_trust_wide_sync_and_cannot_decide_it():
    alpha = School.default()
    bravo = School.objects.create(code="BRAVO", name="Bravo Academy")
    trust_wide = make_sync(schools=[alpha, bravo], filename="trust.zip", joiners=2, tag="A")
    # Bravo's part names its people differently: its joiners must not reach Alpha's admin.
    plan = trust_wide.plan
    plan["schools"][1]["joiners"] = plan["schools"][1]["joiners"][:1]
    for joiner in plan["schools"][1]["joiners"]:
        joiner["last_name"] = "Bravonian"
    RosterSync.objects.filter(pk=trust_wide.pk).update(plan=plan)
    client = school_admin_of(alpha)
    url = reverse("roster:sync", args=[trust_wide.pk])

    response = client.get(url)

    body = text(response)
    assert response.status_code == 200
    assert "only your school's part is shown" in body
    assert "JoA Joiner0" in body and "Bravonian" not in body and "Bravo Academy" not in body
    # Alpha's part: 2 joiners and the returner; not the trust's 5.
    assert "3 joined, 2 left, 1 changed, 0 problems" in body
    assert "only a trust admin can approve or discard it" in body
    assert reverse("roster:approve", args=[trust_wide.pk]) not in body
    refused = client.post(reverse("roster:approve", args=[trust_wide.pk]), follow=True)
    assert "only a trust admin can approve or discard it" in text(refused)
    client.post(reverse("roster:discard", args=[trust_wide.pk]))
    trust_wide.refresh_from_db()
    assert trust_wide.state == RosterSync.State.HELD
    result = client.get(reverse("roster:result", args=[trust_wide.pk])).getvalue().decode()
    assert "JoA Joiner0" in result and "Bravonian" not in result


def test_a_school_admin_prints_only_their_schools_slips_of_a_trust_wide_sync():
    alpha = School.default()
    bravo = School.objects.create(code="BRAVO", name="Bravo Academy")
    trust_wide = make_sync(state=RosterSync.State.APPLIED, schools=[alpha, bravo])
    registered_with_slips(trust_wide, [make_group("7A", school=alpha)])
    registered_with_slips(trust_wide, [make_group("9Z", school=bravo)], password="Bravo-pass-")
    client = school_admin_of(alpha)
    url = reverse("roster:slips", args=[trust_wide.pk])

    listing = text(client.get(url))

    assert "Print slips for 7A" in listing and "Print slips for 9Z" not in listing
