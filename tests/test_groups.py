"""Groups: made by admins, learners moved in and out with history, assigned at registration."""

import pytest
from django.contrib.auth.models import User
from django.utils.html import escape

from accounts.models import StaffRole
from audit.models import AuditEvent
from classes.models import GroupMembership, SchoolGroup, current_academic_year
from imports.models import ImportJob
from learners.models import Learner, Level
from schools.models import School
from tests.factories import (
    HEADER,
    make_group,
    make_learner,
    make_staff,
    put_in_group,
    signed_in,
    upload_file,
)
from tests.journeys import page_showing

GOOD_PASSWORD = "plum-kettle-river-42"


@pytest.fixture
def admin(db) -> User:
    return make_staff("ada.admin", role=StaffRole.ADMIN)


@pytest.fixture
def class_7b(db) -> SchoolGroup:
    return make_group("7B", level=Level.SECONDARY)


@pytest.fixture
def teacher(class_7b) -> User:
    return make_staff("tara.teacher", role=StaffRole.TEACHER, groups=[class_7b])


def test_an_admin_makes_a_class_from_a_name_and_a_level(admin):
    response = signed_in(admin).post("/classes/new/", {"name": " 7B ", "level": Level.SECONDARY})

    group = SchoolGroup.objects.get()
    assert response.status_code == 302 and response.url == f"/classes/{group.pk}/"
    assert (group.name, group.kind, group.level) == ("7B", "class", Level.SECONDARY)
    assert group.academic_year == current_academic_year()
    event = AuditEvent.objects.get(action=AuditEvent.Action.GROUP_CREATED)
    assert event.actor == admin and event.detail["name"] == "7B"


@pytest.mark.backend  # a class name matches in any case (iexact, Lower)
def test_a_class_needs_a_name_and_a_level_and_a_name_free_this_year(admin, class_7b):
    client = signed_in(admin)

    empty = client.post("/classes/new/", {}).content.decode()
    twice = client.post("/classes/new/", {"name": "7b", "level": Level.SECONDARY}).content.decode()

    assert "Enter the group&#x27;s name." in empty and "Choose the level." in empty
    assert f"There is already a group called 7b in {current_academic_year()}." in twice
    assert SchoolGroup.objects.count() == 1


def test_another_schools_7b_leaves_the_name_free_in_this_school(admin):
    ash = School.objects.create(code="100002", name="Ash Academy")
    theirs = SchoolGroup.objects.create(name="7B", level=Level.SECONDARY, school=ash)

    response = signed_in(admin).post("/classes/new/", {"name": "7b", "level": Level.SECONDARY})

    assert response.status_code == 302, response.content.decode()[:2000]
    ours = SchoolGroup.objects.exclude(pk=theirs.pk).get()
    assert ours.name == "7b" and ours.school == School.objects.get(code="SCHOOL")


def test_a_teacher_sees_the_learners_of_their_class_and_no_one_else(teacher, class_7b):
    mine, other = make_learner("mia.mine", "u-mia"), make_learner("oli.other", "u-oli")
    put_in_group(class_7b, mine)
    client = signed_in(teacher)

    listing = client.get("/learners/").content.decode()

    assert "mia.mine" in listing and "oli.other" not in listing
    assert client.get(f"/learners/{mine.pk}/").status_code == 200
    assert client.get(f"/learners/{other.pk}/").status_code == 404
    assert client.get(f"/classes/{class_7b.pk}/").status_code == 200
    searched = page_showing(client, "/learners/", "No learners match", data={"q": "oli"})
    assert "oli.other" not in searched


def test_an_admin_moves_learners_in_and_out_and_the_history_stays(admin, teacher, class_7b):
    pupil = make_learner("pip.pupil", "u-pip")
    client = signed_in(admin)

    found = client.get(f"/classes/{class_7b.pk}/", {"q": "pip"}).content.decode()
    assert 'name="learners"' in found and "pip.pupil" in found
    client.post(f"/classes/{class_7b.pk}/learners/", {"learners": [pupil.pk]})
    assert signed_in(teacher).get(f"/learners/{pupil.pk}/").status_code == 200

    client.post(f"/classes/{class_7b.pk}/learners/{pupil.pk}/remove/")

    assert signed_in(teacher).get(f"/learners/{pupil.pk}/").status_code == 404
    membership = GroupMembership.objects.get(learner=pupil)
    assert membership.left_at is not None and membership.removed_by == admin
    page = client.get(f"/classes/{class_7b.pk}/").content.decode()
    assert "Former members" in page and "Pip Pupil" in page
    assert list(
        AuditEvent.objects.filter(learner=pupil).values_list("action", flat=True).order_by("id")
    ) == [AuditEvent.Action.GROUP_JOINED, AuditEvent.Action.GROUP_LEFT]


def test_a_learner_belongs_to_several_groups_at_once(admin, class_7b):
    year_7 = make_group("Year 7", kind=SchoolGroup.Kind.YEAR_GROUP)
    pupil = make_learner("pip.pupil", "u-pip")
    put_in_group(class_7b, pupil)
    put_in_group(year_7, pupil)

    page = signed_in(admin).get(f"/learners/{pupil.pk}/").content.decode()

    assert ">7B</a>, <a" in page and ">Year 7</a>" in page


def test_a_learner_in_no_group_is_seen_by_admins_and_safeguarding_leads_only(teacher, admin):
    loner = make_learner("lou.loner", "u-lou")
    dsl = make_staff("dee.dsl", role=StaffRole.DSL)
    head = make_staff("hugo.hoy", role=StaffRole.HEAD_OF_YEAR, groups=[make_group("Year 9")])

    assert signed_in(admin).get(f"/learners/{loner.pk}/").status_code == 200
    assert signed_in(dsl).get(f"/learners/{loner.pk}/").status_code == 200
    assert signed_in(teacher).get(f"/learners/{loner.pk}/").status_code == 404
    assert signed_in(head).get(f"/learners/{loner.pk}/").status_code == 404


def test_registration_puts_the_learner_in_the_chosen_class(admin, class_7b, upstream):
    response = signed_in(admin).post(
        "/learners/new/",
        {"username": "nia.new", "password": GOOD_PASSWORD, "dob": "2013-03-02",
         "school_class": class_7b.pk},
    )  # fmt: skip

    learner = Learner.objects.get(username="nia.new")
    assert response.status_code == 302
    assert list(learner.group_memberships.values_list("group__name", flat=True)) == ["7B"]


@pytest.mark.backend  # a class name matches in any case (iexact, Lower)
def test_a_script_may_name_the_class_instead_of_its_id(admin, class_7b, upstream):
    signed_in(admin).post(
        "/learners/new/",
        {"username": "nia.new", "password": GOOD_PASSWORD, "dob": "2013-03-02",
         "school_class": "7b"},
    )  # fmt: skip

    assert Learner.objects.get(username="nia.new").group_memberships.get().group == class_7b


@pytest.mark.backend  # a class name matches in any case (iexact, Lower)
def test_a_class_named_in_several_years_means_this_years(admin, class_7b, upstream):
    SchoolGroup.objects.create(name="7B", level=Level.SECONDARY, academic_year="2019/20")

    signed_in(admin).post(
        "/learners/new/",
        {"username": "nia.new", "password": GOOD_PASSWORD, "dob": "2013-03-02",
         "school_class": "7B"},
    )  # fmt: skip

    assert Learner.objects.get(username="nia.new").group_memberships.get().group == class_7b


def test_registering_without_a_class_keeps_working_for_whole_school_roles(admin, upstream):
    response = signed_in(admin).post(
        "/learners/new/", {"username": "nia.new", "password": GOOD_PASSWORD, "dob": "2013-03-02"}
    )

    assert response.status_code == 302
    assert not Learner.objects.get(username="nia.new").group_memberships.exists()


def test_a_teacher_registers_only_into_one_of_their_own_classes(teacher, class_7b, upstream):
    other_class = make_group("8C")
    client = signed_in(teacher)
    data = {"username": "nia.new", "password": GOOD_PASSWORD, "dob": "2013-03-02"}

    form = client.get("/learners/new/").content.decode()
    without = client.post("/learners/new/", data).content.decode()
    elsewhere = client.post("/learners/new/", {**data, "school_class": other_class.pk})

    # Option labels read "7B (2026/27)"; a bare "8C" could turn up in the CSRF token.
    assert ">7B (" in form and ">8C (" not in form
    assert "Choose the class or group." in without
    assert "Select a valid choice" in elsewhere.content.decode()
    assert not Learner.objects.exists()
    client.post("/learners/new/", {**data, "school_class": class_7b.pk})
    assert client.get(f"/learners/{Learner.objects.get().pk}/").status_code == 200


@pytest.mark.backend  # a class name matches in any case (iexact, Lower)
@pytest.mark.django_db(transaction=True)  # the run is queued when the confirmation commits
def test_the_csv_class_column_puts_each_learner_in_its_groups(admin, class_7b, upstream):
    year_7 = make_group("Year 7", kind=SchoolGroup.Kind.YEAR_GROUP)
    text = (
        f"{HEADER},class\n"
        f"ana.one,{GOOD_PASSWORD},2013-01-01,,Ana,One,,7B; year 7\n"
        f"bo.two,{GOOD_PASSWORD},2013-01-01,,Bo,Two,,\n"
    )
    client = signed_in(admin)
    response = client.post("/learners/import/", {"file": upload_file(text)})
    job = ImportJob.objects.get()

    client.post(f"/learners/import/{job.pk}/confirm/")

    assert response.status_code == 302
    ana = Learner.objects.get(username="ana.one")
    assert set(ana.group_memberships.values_list("group__name", flat=True)) == {"7B", "Year 7"}
    assert not Learner.objects.get(username="bo.two").group_memberships.exists()
    assert year_7.memberships.count() == 1


def test_a_csv_naming_an_unknown_group_says_so_on_that_row(admin, class_7b, upstream):
    text = f"{HEADER},class\nana.one,{GOOD_PASSWORD},2013-01-01,,Ana,One,,7B;7Z\n"

    response = signed_in(admin).post("/learners/import/", {"file": upload_file(text)}, follow=True)

    row = ImportJob.objects.get().rows.get()
    problem = (
        "class: There is no group called “7Z”. Make it on the Classes page first, or correct "
        "the name (several groups are separated by ;)."
    )
    assert (row.state, row.problems) == ("invalid", [problem])
    assert escape(problem) in response.content.decode()


def test_staff_pages_say_plainly_when_a_teacher_has_no_class_yet(db):
    newcomer = make_staff("nat.new", role=StaffRole.TEACHER)

    page = signed_in(newcomer).get("/classes/").content.decode()

    assert "You do not work with any group yet." in page


def test_changing_a_group_records_exactly_what_changed(admin, class_7b):
    response = signed_in(admin).post(
        f"/classes/{class_7b.pk}/edit/",
        {"name": "7B", "level": Level.PRIMARY, "kind": "class",
         "academic_year": class_7b.academic_year},
    )  # fmt: skip

    assert response.status_code == 302
    class_7b.refresh_from_db()
    assert class_7b.level == Level.PRIMARY
    event = AuditEvent.objects.get(action=AuditEvent.Action.GROUP_CHANGED)
    assert event.detail == {"group": class_7b.pk, "level": Level.PRIMARY}


def test_a_group_names_who_its_pupils_can_talk_to(admin, class_7b):
    response = signed_in(admin).post(
        f"/classes/{class_7b.pk}/edit/",
        {"name": "7B", "level": Level.SECONDARY, "kind": "class",
         "academic_year": class_7b.academic_year, "contact": " Mr Osei,  in room 4 "},
    )  # fmt: skip

    assert response.status_code == 302
    class_7b.refresh_from_db()
    assert class_7b.contact == "Mr Osei, in room 4"
    event = AuditEvent.objects.get(action=AuditEvent.Action.GROUP_CHANGED)
    assert event.detail == {"group": class_7b.pk, "contact": "Mr Osei, in room 4"}
    page = signed_in(admin).get(f"/classes/{class_7b.pk}/").content.decode()
    assert "<dt>Pupils talk to</dt><dd>Mr Osei, in room 4</dd>" in page
    assert "Who its pupils can talk to (optional)" in (
        signed_in(admin).get(f"/classes/{class_7b.pk}/edit/").content.decode()
    )
