"""A school admin's part of a sync of several schools: its problems, staleness and the list."""

import html
import importlib
from dataclasses import replace

import pytest
from django.apps import apps
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import StaffRole
from roster.models import RosterPerson, RosterSync
from roster.planning import plan_sync
from roster.records import Problem
from roster.services import RosterSyncClosed, roster_sync_approve
from schools.models import School
from tests.factories import make_staff
from tests.roster_files import Pupil, RosterSpec, add_school
from tests.roster_files import School as RosterSchool
from tests.roster_sets import file_set
from tests.roster_syncs import make_sync

pytestmark = pytest.mark.django_db

TAKEN = "username jo.smith is taken by another account."


def text(response) -> str:
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def admin_of(school: School | None) -> Client:
    """Return a client logged in as the school's admin (None: a trust admin)."""
    client = Client(raise_request_exception=True)
    if school is None:
        client.force_login(make_staff("tia.trust", role=StaffRole.TRUST_ADMIN))
    else:
        name = f"admin.{school.code.lower()}"
        client.force_login(make_staff(name, role=StaffRole.ADMIN, school=school))
    return client


@pytest.fixture
def alpha() -> School:
    return School.objects.create(code="ALPHA", name="Alpha Academy")


@pytest.fixture
def bravo() -> School:
    return School.objects.create(code="BRAVO", name="Bravo Academy")


def trust_wide_sync(alpha: School, bravo: School) -> RosterSync:
    """Plan a trust's files whose problems are Alpha's, Bravo's, a file's and an unknown row's.

    Bravo's pupil "1042" has a username taken; Alpha knows a person "1042" of its own.
    Alpha's new pupil has no birth date. enrollments.csv is a problem as a whole, and a
    users.csv row the reader could not use belongs to no school it knows.
    """
    RosterPerson.objects.create(school=alpha, sourced_id="1042", role="student")
    make_staff("jo.smith")
    spec = RosterSpec(schools=[RosterSchool("org-a", "Alpha", "ALPHA")])
    add_school(spec, org="org-a", pupils=1, classes=1, grade="07", year_of_birth=2014,
               prefix="a")  # fmt: skip
    spec.pupils[0] = replace(spec.pupils[0], birth_date=None)
    spec.schools.append(RosterSchool("org-b", "Bravo", "BRAVO"))
    spec.pupils.append(Pupil("1042", "Jo", "Smith", "07", None, "org-b", username="jo.smith"))
    files = file_set(spec)
    files.problems += [
        Problem("enrollments.csv", 0, "enrollments.csv is cut short."),
        Problem("users.csv", 9, "The row's role is unknown.", "x-unknown"),
    ]
    plan = plan_sync(files)
    sync = RosterSync.objects.create(
        origin=RosterSync.Origin.UPLOAD, filename="trust.zip", state=RosterSync.State.HELD,
        plan=plan.to_json(), joined=plan.joined, problems=len(plan.problems),
        school_figures=plan.school_figures(),
    )  # fmt: skip
    sync.schools.set([alpha, bravo])
    return sync


def test_a_school_admin_reads_their_schools_problems_and_whole_files_not_others(alpha, bravo):
    sync = trust_wide_sync(alpha, bravo)
    client = admin_of(alpha)

    page = text(client.get(reverse("roster:sync", args=[sync.pk])))
    result = client.get(reverse("roster:result", args=[sync.pk])).getvalue().decode()

    assert "only your school's part is shown" in page
    for shown in (page, result):
        assert "birthDate" in shown and "enrollments.csv is cut short." in shown
        assert TAKEN not in shown and "The row's role is unknown." not in shown
    assert "0 joined, 0 left, 0 changed, 2 problems" in page
    listing = text(client.get(reverse("roster:index")))
    assert "trust.zip" in listing and "2 problems" in listing

    bravos = text(admin_of(bravo).get(reverse("roster:sync", args=[sync.pk])))
    assert TAKEN in bravos and "enrollments.csv is cut short." in bravos
    assert "birthDate" not in bravos and "The row's role is unknown." not in bravos

    trusts = text(admin_of(None).get(reverse("roster:sync", args=[sync.pk])))
    assert TAKEN in trusts and "birthDate" in trusts and "The row's role is unknown." in trusts


def test_a_plan_kept_before_problems_named_their_school_shows_its_known_rows(alpha, bravo):
    sync = trust_wide_sync(alpha, bravo)
    plan = dict(sync.plan)
    del plan["problem_schools"]
    for problem in plan["problems"]:
        del problem["school_id"]
    RosterSync.objects.filter(pk=sync.pk).update(plan=plan)

    page = text(admin_of(alpha).get(reverse("roster:sync", args=[sync.pk])))

    assert "only your school's part is shown" in page
    assert TAKEN in page and "enrollments.csv is cut short." not in page


def applied(*schools: School, limited_to: School | None = None) -> RosterSync:
    """Return a sync applied just now that touched the schools (the nightly drop's, say)."""
    sync = make_sync(state=RosterSync.State.APPLIED, school=limited_to, schools=list(schools))
    RosterSync.objects.filter(pk=sync.pk).update(applied_at=timezone.now())
    return sync


@pytest.mark.parametrize("alphas", ["upload", "trust-wide"])
def test_a_sync_applied_elsewhere_leaves_a_held_one_approvable_one_of_its_schools_not(
    alpha, bravo, alphas
):
    charlie = School.objects.create(code="CHARLIE", name="Charlie Academy")
    staff = make_staff("tia.trust", role=StaffRole.TRUST_ADMIN)

    def held() -> RosterSync:
        if alphas == "upload":
            return make_sync(school=alpha, schools=[alpha])
        return make_sync(schools=[alpha, bravo])

    first = held()
    applied(charlie)  # a trust-wide drop touching Charlie only
    applied(charlie, limited_to=charlie)

    approved = roster_sync_approve(sync=first, approved_by=staff, address=None, at_once=False)

    assert approved.state in (RosterSync.State.APPLYING, RosterSync.State.APPLIED)
    assert not approved.error
    second = held()
    applied(alpha, charlie)
    with pytest.raises(RosterSyncClosed, match="Another sync was applied after this one was read"):
        roster_sync_approve(sync=second, approved_by=staff, address=None, at_once=False)
    second.refresh_from_db()
    assert second.state == RosterSync.State.HELD


@pytest.mark.parametrize("syncs", [1, 12])
def test_the_list_shows_a_school_admin_their_parts_counts_in_few_queries(
    alpha, bravo, syncs, django_assert_max_num_queries
):
    for number in range(syncs):
        make_sync(schools=[alpha, bravo], filename=f"trust-{number}.zip", joiners=2)
    client = admin_of(alpha)
    client.get(reverse("roster:index"))  # the session's first reads are not the list's

    with django_assert_max_num_queries(11):
        listing = text(client.get(reverse("roster:index")))

    assert listing.count("Held: waiting for a trust admin") == syncs
    # Alpha's part: 2 joiners and the returner; the trust's 6 and its 2 problems are not.
    assert listing.count("3 joined, 2 left, 1 changed, 0 problems") == syncs


def test_the_migration_keeps_each_schools_counts_of_syncs_planned_before(alpha, bravo):
    sync = trust_wide_sync(alpha, bravo)
    plan = dict(sync.plan)
    del plan["problem_schools"]
    for problem in plan["problems"]:
        del problem["school_id"]
    RosterSync.objects.filter(pk=sync.pk).update(plan=plan, school_figures={})
    migration = importlib.import_module("roster.migrations.0007_sync_school_figures")

    migration.school_figures_fill(apps, None)

    sync.refresh_from_db()
    # As the list showed them then: the problems of the rows each school knows.
    assert sync.school_figures == {
        str(alpha.pk): {"joined": 0, "left": 0, "changed": 0, "problems": 1},
        str(bravo.pk): {"joined": 0, "left": 0, "changed": 0, "problems": 0},
    }
    listing = text(admin_of(alpha).get(reverse("roster:index")))
    assert "trust.zip" in listing and "0 joined, 0 left, 0 changed, 1 problems" in listing
