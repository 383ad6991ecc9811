"""Last year's archived classes: read-only, their history kept, offered in no menu."""

import io
from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from accounts.models import StaffRole
from classes.archived import GroupArchived
from classes.models import GroupMembership, SchoolGroup
from classes.services import group_learner_remove, group_learners_add, group_update
from imports.models import ImportJob
from learners.models import Learner, Level
from lessons.models import SignInWindow
from lessons.services import group_cards_print, window_open
from tests.factories import HEADER, make_group, make_learner, make_staff, signed_in, upload_file
from tests.journeys import page_showing

GOOD_PASSWORD = "plum-kettle-river-42"
ARCHIVED_ON = datetime(2026, 7, 24, 12, tzinfo=timezone.get_current_timezone())
NOTICE = "Archived on 24 July 2026: last year's class, read-only."
REFUSED = "was archived on 24 July 2026: it is last year&#x27;s class"


def archive(group: SchoolGroup, *, end_memberships: bool = True) -> SchoolGroup:
    """Archive a group as the roster's September sync leaves it (memberships ended)."""
    if end_memberships:
        group.memberships.filter(left_at__isnull=True).update(left_at=ARCHIVED_ON)
    group.archived_at = ARCHIVED_ON
    group.save(update_fields=["archived_at"])
    return group


@pytest.fixture
def admin(db) -> User:
    return make_staff("ada.admin", role=StaffRole.ADMIN)


@pytest.fixture
def old_7b(db) -> SchoolGroup:
    """Last year's 7B, with a pupil who was in it from September to July."""
    group = SchoolGroup.objects.create(name="7B", level=Level.SECONDARY, academic_year="2025/26")
    pip = make_learner("pip.pupil", "u-pip")
    GroupMembership.objects.create(
        group=group, learner=pip, joined_at=ARCHIVED_ON - timedelta(days=300)
    )
    return archive(group)


@pytest.fixture
def teacher(old_7b) -> User:
    return make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[old_7b])


# The class list and the class page -----------------------------------------------------------


def test_the_class_list_shows_current_classes_and_links_to_archived_ones_apart(admin, old_7b):
    make_group("8C")
    client = signed_in(admin)

    current = page_showing(client, "/classes/", ">8C</a>")
    archived = page_showing(client, "/classes/?archived=1", "<h1>Archived classes</h1>")

    assert 'href="/classes/?archived=1"' in current
    assert f'href="/classes/{old_7b.pk}/"' not in current
    assert f'href="/classes/{old_7b.pk}/"' in archived and "24 Jul 2026" in archived
    assert ">8C</a>" not in archived


def test_a_teacher_of_an_archived_class_finds_it_only_among_the_archived(teacher, old_7b):
    client = signed_in(teacher)

    current = page_showing(client, "/classes/", "You do not work with any group yet")
    archived = page_showing(client, "/classes/?archived=1", ">7B</a>")

    assert f'href="/classes/{old_7b.pk}/"' not in current
    assert "2025/26" in archived


def test_an_archived_class_page_opens_read_only_with_its_history(admin, teacher, old_7b):
    for user in (admin, teacher):
        page = page_showing(signed_in(user), f"/classes/{old_7b.pk}/", NOTICE)

        assert "Who was in it" in page and "Pip Pupil" in page
        assert "from " in page and " to 24 Jul 2026" in page
        assert f"/classes/{old_7b.pk}/edit/" not in page
        assert 'id="add-learners"' not in page and "/cards/" not in page
        assert "/sign-in/open/" not in page


def test_a_current_class_page_has_no_archived_notice(admin):
    group = make_group("8C")

    page = page_showing(signed_in(admin), f"/classes/{group.pk}/", "Change the group")

    assert "Archived on" not in page


# Every change is refused, with the reason ---------------------------------------------------


def refused_with_message(client: Client, response, group: SchoolGroup) -> str:
    """Check the refusal went back to the class page; return that page with its message."""
    assert response.status_code == 302 and response.url == f"/classes/{group.pk}/"
    return page_showing(client, response.url, REFUSED)


def test_editing_an_archived_class_is_refused_and_changes_nothing(admin, old_7b):
    client = signed_in(admin)

    form = client.get(f"/classes/{old_7b.pk}/edit/")
    refused_with_message(client, form, old_7b)
    saved = client.post(
        f"/classes/{old_7b.pk}/edit/",
        {"name": "7B renamed", "level": Level.SECONDARY, "contact": "Mr Osei"},
    )

    refused_with_message(client, saved, old_7b)
    old_7b.refresh_from_db()
    assert (old_7b.name, old_7b.contact) == ("7B", "")


def test_adding_or_removing_pupils_of_an_archived_class_is_refused(admin, old_7b):
    newcomer = make_learner("nia.new", "u-nia")
    client = signed_in(admin)

    added = client.post(f"/classes/{old_7b.pk}/learners/", {"learners": [newcomer.pk]})
    refused_with_message(client, added, old_7b)
    pip = Learner.objects.get(username="pip.pupil")
    removed = client.post(f"/classes/{old_7b.pk}/learners/{pip.pk}/remove/")

    refused_with_message(client, removed, old_7b)
    assert not newcomer.group_memberships.exists()
    assert GroupMembership.objects.get(learner=pip).left_at == ARCHIVED_ON


def test_cards_and_card_sign_in_of_an_archived_class_are_refused(admin, teacher, old_7b):
    for user in (admin, teacher):
        client = signed_in(user)

        cards = client.get(f"/classes/{old_7b.pk}/cards/")
        refused_with_message(client, cards, old_7b)
        opened = client.post(f"/classes/{old_7b.pk}/sign-in/open/", {"minutes": 30})

        refused_with_message(client, opened, old_7b)
    assert not SignInWindow.objects.exists()


def test_the_services_refuse_an_archived_class(admin, old_7b):
    pip = Learner.objects.get(username="pip.pupil")
    changes = {
        "name": "7B",
        "level": Level.SECONDARY,
        "kind": "class",
        "academic_year": "2025/26",
        "contact": "Room 4",
        "staff": [],
        "changed_by": admin,
        "address": None,
    }
    calls = [
        lambda: group_update(group=old_7b, **changes),
        lambda: group_learners_add(group=old_7b, learners=[pip], added_by=admin, address=None),
        lambda: group_learner_remove(group=old_7b, learner=pip, removed_by=admin, address=None),
        lambda: group_cards_print(group=old_7b, learners=[], printed_by=admin, address=None),
        lambda: window_open(group=old_7b, minutes=30, opened_by=admin, address=None),
    ]
    for call in calls:
        with pytest.raises(GroupArchived) as refused:
            call()
        assert "last year's class" in refused.value.message
    old_7b.refresh_from_db()
    assert old_7b.contact == "" and not SignInWindow.objects.exists()


# What an archived class no longer gives ----------------------------------------------------


def test_a_teacher_no_longer_sees_pupils_through_an_archived_class(old_7b, teacher):
    # Even a membership the archiving missed gives no sight of the pupil.
    stayed = make_learner("sam.stayed", "u-sam")
    GroupMembership.objects.create(group=old_7b, learner=stayed)
    client = signed_in(teacher)

    listing = page_showing(client, "/learners/", "0 learners")

    assert "sam.stayed" not in listing
    assert client.get(f"/learners/{stayed.pk}/").status_code == 404


def test_a_card_of_an_archived_class_window_left_open_signs_nobody_in(admin):
    group = make_group("2C", level=Level.PRIMARY)
    amy = make_learner("amy.pupil", "u-amy")
    GroupMembership.objects.create(group=group, learner=amy)
    card = group_cards_print(group=group, learners=[amy], printed_by=admin, address=None)[0]
    window_open(group=group, minutes=30, opened_by=admin, address=None)
    before = Client().post("/card/", {"code": card.code})
    assert before.status_code == 200 and "That's me: Amy" in before.content.decode()
    archive(group, end_memberships=False)

    response = Client().post("/card/", {"code": card.code})

    assert response.status_code == 403 and "Ask your teacher" in response.content.decode()


# No menu offers an archived class ----------------------------------------------------------


def test_registering_a_learner_offers_no_archived_class(admin, old_7b, upstream):
    current = make_group("8C")
    client = signed_in(admin)
    data = {"username": "nia.new", "password": GOOD_PASSWORD, "dob": "2013-03-02"}

    form = page_showing(client, "/learners/new/", ">8C (")
    by_id = client.post("/learners/new/", {**data, "school_class": old_7b.pk}).content.decode()
    by_name = client.post("/learners/new/", {**data, "school_class": "7B"}).content.decode()

    assert ">7B (" not in form
    assert "Select a valid choice" in by_id
    assert "There is no group called 7B that you can add learners to." in by_name
    assert not Learner.objects.filter(username="nia.new").exists()
    client.post("/learners/new/", {**data, "school_class": current.pk})
    assert Learner.objects.get(username="nia.new").group_memberships.get().group == current


def test_a_registration_file_naming_an_archived_class_says_so_on_that_row(admin, old_7b):
    text = f"{HEADER},class\nana.one,{GOOD_PASSWORD},2013-01-01,,Ana,One,,7B\n"

    signed_in(admin).post("/learners/import/", {"file": upload_file(text)})

    row = ImportJob.objects.get().rows.get()
    assert row.state == "invalid" and "There is no group called “7B”" in row.problems[0]


def test_the_staff_account_form_offers_no_archived_class_and_keeps_its_links(admin, old_7b):
    current = make_group("8C")
    tara = make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[old_7b])
    client = signed_in(admin)

    form = page_showing(client, f"/staff/{tara.pk}/", "8C (")
    saved = client.post(
        f"/staff/{tara.pk}/",
        {"email": "tara@school.example", "role": "teacher", "is_active": "on",
         "groups": [current.pk]},
    )  # fmt: skip
    sneaked = client.post(
        "/staff/new/",
        {"username": "tom.teacher", "email": "tom@school.example", "role": "teacher",
         "groups": [old_7b.pk], "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD},
    )  # fmt: skip

    assert "7B (2025/26)" not in form
    assert saved.status_code == 302
    # Her time with last year's class stays as history beside this year's.
    assert set(tara.school_groups.all()) == {old_7b, current}
    assert "Select a valid choice" in sneaked.content.decode()
    assert not User.objects.filter(username="tom.teacher").exists()


def test_add_staff_will_not_put_anyone_in_an_archived_class(db, monkeypatch):
    monkeypatch.setenv("STAFF_PASSWORD", GOOD_PASSWORD)
    group = archive(make_group("7B"))

    with pytest.raises(CommandError, match="is archived"):
        call_command(
            "add_staff", "tara.teacher", "--email", "t@school.example", "--role", "teacher",
            "--group", "7B", stdout=io.StringIO(),
        )  # fmt: skip

    assert not group.staff_links.exists()
