"""Staff in several schools pick the school they work in; trust roles sit above the schools."""

import pytest

from accounts.models import SchoolRole, StaffRole
from learners.models import Learner
from schools.models import PartnerSettings, School, first_school_id
from tests.factories import make_learner, make_staff, signed_in
from tests.journeys import page_showing

pytestmark = pytest.mark.django_db


@pytest.fixture
def schools():
    """The partner's first school and a second one."""
    ash = School.objects.get(pk=first_school_id())
    ash.name = "Ash Academy"
    ash.save()
    oak = School.objects.create(code="100002", name="Oak Primary")
    PartnerSettings.objects.create(school=oak)
    return ash, oak


def pupil_of(school, username):
    learner = make_learner(username, f"u-{username}")
    Learner.objects.filter(pk=learner.pk).update(school=school)
    return learner


def test_a_teacher_in_two_schools_switches_and_each_page_says_where(schools):
    ash, oak = schools
    tess = make_staff("tess.teacher", role=StaffRole.TEACHER, school=ash)
    SchoolRole.objects.create(user=tess, school=oak, role=StaffRole.DSL)
    pupil_of(ash, "amy.ash")
    pupil_of(oak, "olly.oak")
    client = signed_in(tess)

    page = page_showing(client, "/learners/", "<h1>Learners</h1>")
    assert "Working in: Ash Academy" in page and 'name="school"' in page
    assert "olly.oak" not in page  # a teacher of Ash sees no Oak pupil (and no Ash one: no group)

    switched = client.post("/schools/choose/", {"school": oak.pk, "next": "/learners/"})
    assert switched.status_code == 302 and switched["Location"] == "/learners/"
    page = page_showing(client, "/learners/", "Working in: Oak Primary")
    # A DSL in Oak: every Oak pupil, never an Ash one.
    assert "olly.oak" in page and "amy.ash" not in page


def test_nobody_chooses_a_school_they_do_not_work_in(schools):
    ash, oak = schools
    tess = make_staff("tess.teacher", role=StaffRole.DSL, school=ash)
    pupil_of(oak, "olly.oak")
    client = signed_in(tess)
    client.post("/schools/choose/", {"school": oak.pk, "next": "/learners/"})
    client.post("/schools/choose/", {"school": "all", "next": "/learners/"})
    page = page_showing(client, "/learners/", "Working in: Ash Academy")
    assert "olly.oak" not in page and "All schools" not in page


def test_one_school_shows_nothing_about_schools(staff):
    page = page_showing(signed_in(staff), "/learners/", "<h1>Learners</h1>")
    assert "Working in" not in page and "school-choice" not in page


def test_a_trust_admin_sees_all_schools_and_picks_one_to_register(schools):
    ash, oak = schools
    ada = make_staff("ada.trust", role=StaffRole.TRUST_ADMIN)
    pupil_of(ash, "amy.ash")
    pupil_of(oak, "olly.oak")
    client = signed_in(ada)

    client.post("/schools/choose/", {"school": "all", "next": "/learners/"})
    page = page_showing(client, "/learners/", "Working in: all schools")
    assert "amy.ash" in page and "olly.oak" in page
    asked = page_showing(client, "/learners/new/", "Choose a school first")
    assert 'name="username"' not in asked

    client.post("/schools/choose/", {"school": oak.pk, "next": "/learners/"})
    form = page_showing(client, "/learners/new/", 'name="username"')
    assert "Working in: Oak Primary" in form


def test_a_trust_admin_gives_another_schools_teacher_a_role_here(schools):
    ash, oak = schools
    ada = make_staff("ada.trust", role=StaffRole.TRUST_ADMIN)
    olga = make_staff("olga.teacher", role=StaffRole.TEACHER, school=oak)
    client = signed_in(ada)
    client.post("/schools/choose/", {"school": ash.pk, "next": "/staff/"})

    listing = page_showing(client, "/staff/", "olga.teacher")
    assert "Oak Primary: Teacher" in listing and "No role in this school" in listing
    response = client.post(
        f"/staff/{olga.pk}/",
        {"email": "olga@oak.example", "role": "head_of_year", "is_active": "on"},
    )
    assert response.status_code == 302
    held = dict(SchoolRole.objects.filter(user=olga).values_list("school_id", "role"))
    assert held == {oak.pk: StaffRole.TEACHER, ash.pk: StaffRole.HEAD_OF_YEAR}


def test_a_school_admin_cannot_make_anyone_a_trust_role_or_see_another_schools_staff(schools):
    ash, oak = schools
    admin = make_staff("ann.admin", role=StaffRole.ADMIN, school=ash)
    tom = make_staff("tom.teacher", role=StaffRole.TEACHER, school=ash)
    olga = make_staff("olga.teacher", role=StaffRole.TEACHER, school=oak)
    client = signed_in(admin)

    listing = page_showing(client, "/staff/", "tom.teacher")
    assert "olga.teacher" not in listing
    assert client.get(f"/staff/{olga.pk}/").status_code == 404
    refused = client.post(
        f"/staff/{tom.pk}/", {"email": "t@ash.example", "role": "trust_admin", "is_active": "on"}
    )
    assert refused.status_code == 200 and "Select a valid choice" in refused.content.decode()
    assert not tom.staff_profile.role


def test_under_all_schools_editing_staff_asks_for_a_school_first(schools):
    ash, oak = schools
    ada = make_staff("ada.trust", role=StaffRole.TRUST_ADMIN)
    olga = make_staff("olga.admin", role=StaffRole.ADMIN, school=oak)
    client = signed_in(ada)
    client.post("/schools/choose/", {"school": "all", "next": "/staff/"})

    response = client.post(
        f"/staff/{olga.pk}/", {"email": "olga@oak.example", "role": "admin", "is_active": "on"}
    )

    assert response.status_code == 200 and "Choose a school first" in response.content.decode()
    assert dict(SchoolRole.objects.filter(user=olga).values_list("school_id", "role")) == {
        oak.pk: StaffRole.ADMIN
    }


def test_one_schools_admin_cannot_change_the_address_another_school_relies_on(schools):
    ash, oak = schools
    admin = make_staff("ann.admin", role=StaffRole.ADMIN, school=ash)
    dan = make_staff("dan.dsl", role=StaffRole.TEACHER, school=ash)
    SchoolRole.objects.create(user=dan, school=oak, role=StaffRole.DSL)

    refused = signed_in(admin).post(
        f"/staff/{dan.pk}/",
        {"email": "elsewhere@example.org", "role": "teacher", "is_active": "on"},
    )

    assert refused.status_code == 200
    assert "ask a trust admin" in refused.content.decode()
    dan.refresh_from_db()
    assert dan.email == "" and dan.is_active


def test_under_all_schools_an_admin_reads_results_only_where_every_school_allows(schools):
    ash, oak = schools
    PartnerSettings.objects.filter(school=ash).update(admins_see_results=True)
    ada = make_staff("ada.trust", role=StaffRole.TRUST_ADMIN)
    client = signed_in(ada)

    client.post("/schools/choose/", {"school": ash.pk, "next": "/learners/"})
    assert client.get("/learners/results.csv").status_code == 200
    client.post("/schools/choose/", {"school": "all", "next": "/learners/"})
    assert client.get("/learners/results.csv").status_code == 404
    PartnerSettings.objects.filter(school=oak).update(admins_see_results=True)
    assert client.get("/learners/results.csv").status_code == 200
