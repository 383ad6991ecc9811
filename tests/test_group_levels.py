"""Adding to a class shows each pupil's level, and asks before a pupil of another level joins."""

import re

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import StaffRole
from classes.models import GroupMembership
from classes.services import group_learners_add
from learners.models import Level
from schools.models import School
from tests.factories import cohort_learner, make_group, make_learner, make_staff


@pytest.fixture
def class_3p(db):
    group = make_group("3P", level=Level.PRIMARY)
    group.contact = "Ms Rowe in room 2"
    group.save()
    return group


@pytest.fixture
def admin(db):
    client = Client()
    client.force_login(make_staff("ada.admin", role=StaffRole.ADMIN))
    return client


@pytest.fixture
def pia(db):
    return cohort_learner(name="pia.prim", level=Level.PRIMARY)


@pytest.fixture
def sam(db):
    return cohort_learner(name="sam.second", level=Level.SECONDARY)


def members(group) -> set[str]:
    return set(
        GroupMembership.objects.filter(group=group, left_at__isnull=True).values_list(
            "learner__username", flat=True
        )
    )


def add(client: Client, group, *learners, **extra):
    data = {"learners": [learner.pk for learner in learners], **extra}
    return client.post(f"/classes/{group.pk}/learners/", data)


def test_the_search_shows_each_learners_level_and_marks_another_level(admin, class_3p, pia, sam):
    response = admin.get(f"/classes/{class_3p.pk}/?q=pia")
    page = response.content.decode()
    assert response.status_code == 200
    assert "This class is Primary." in page
    assert 'Pia.Prim Pupil (pia.prim), <span class="level-tag">Primary</span>' in page

    page = admin.get(f"/classes/{class_3p.pk}/?q=sam").content.decode()

    assert (
        'Sam.Second Pupil (sam.second), <span class="level-tag">Secondary '
        "<strong>(not this class's level)</strong></span>"
    ) in page


def test_a_learner_of_the_classes_level_is_added_at_once(admin, class_3p, pia):
    response = add(admin, class_3p, pia)

    assert response.status_code == 302 and response.url == f"/classes/{class_3p.pk}/"
    assert members(class_3p) == {"pia.prim"}


def test_another_level_adds_nobody_until_confirmed_and_lists_every_choice(
    admin, class_3p, pia, sam
):
    response = add(admin, class_3p, pia, sam, q="pupil")

    page = response.content.decode()
    assert response.status_code == 200
    assert "<h1>Add learners of another level to 3P?</h1>" in page
    assert "Nobody has been added yet." in page
    # Pia (the class's level) will be added with the rest; Sam is a ticked box to confirm.
    assert "<h2>Will be added to 3P</h2>" in page
    assert (
        "<strong>Pia.Prim Pupil</strong> <span>Primary</span>"
        f'<input type="hidden" name="learners" value="{pia.pk}">'
    ) in page
    assert (
        f'<input type="checkbox" name="learners" value="{sam.pk}" id="held-{sam.pk}" checked> '
        f'<label for="held-{sam.pk}"><strong>Sam.Second Pupil</strong> '
        "is Secondary; this class is Primary.</label>"
    ) in page
    assert "<legend>Learners of another level: untick any you do not mean to add</legend>" in page
    assert "Their level stays as it is" in page
    assert "Their results page names who 3P's pupils talk to: Ms Rowe in room 2." in page
    assert '<input type="hidden" name="q" value="pupil">' in page
    assert (
        f'href="/classes/{class_3p.pk}/?q=pupil&amp;learners={pia.pk}&amp;learners={sam.pk}'
        '#add-learners">Go back</a>'
    ) in page
    assert members(class_3p) == set()
    assert "added to 3P." not in page


def test_go_back_returns_to_the_search_with_every_choice_still_ticked(admin, class_3p, pia, sam):
    response = admin.get(f"/classes/{class_3p.pk}/?q=pupil&learners={pia.pk}&learners={sam.pk}")

    page = response.content.decode()
    assert response.status_code == 200
    assert '<input type="search" id="learner-search" name="q" value="pupil">' in page
    for learner in (pia, sam):
        assert re.search(
            rf'<input type="checkbox" name="learners" value="{learner.pk}"[^>]* checked', page
        )
    assert members(class_3p) == set()


def test_adding_after_the_question_adds_the_ticked_and_the_same_level_and_keeps_the_search(
    admin, class_3p, pia, sam
):
    assert add(admin, class_3p, sam).status_code == 200
    assert members(class_3p) == set()

    response = add(admin, class_3p, pia, sam, confirm="on", q="pupil")

    assert response.status_code == 302
    assert response.url == f"/classes/{class_3p.pk}/?q=pupil#add-learners"
    assert members(class_3p) == {"pia.prim", "sam.second"}
    page = admin.get(response.url).content.decode()
    assert "2 learners added to 3P." in page


def test_unticking_one_of_another_level_adds_the_rest(admin, class_3p, pia, sam):
    # Sam's box unticked on the question: only Pia's (hidden) choice comes back.
    response = add(admin, class_3p, pia, confirm="on", q="pupil")

    assert response.status_code == 302
    assert members(class_3p) == {"pia.prim"}


def test_the_confirmed_add_still_refuses_a_learner_of_another_school(admin, class_3p, pia):
    other = School.objects.create(code="BRAVO", name="Bravo Academy")
    stranger = make_learner("sol.bravo", "u-sol", school=other)

    response = add(admin, class_3p, pia, stranger, confirm="on", q="pupil")

    assert response.status_code == 302
    assert response.url == f"/classes/{class_3p.pk}/?q=pupil#add-learners"
    assert members(class_3p) == set()
    assert not GroupMembership.objects.filter(learner=stranger).exists()


def test_a_class_or_learner_without_a_level_asks_nothing(admin, pia):
    unset = make_group("Library helpers", level="")

    response = add(admin, unset, pia)

    assert response.status_code == 302
    assert members(unset) == {"pia.prim"}


def test_a_leaver_among_those_held_back_stops_the_whole_add(admin, class_3p, pia, sam):
    sam.left_at = timezone.now()
    sam.save()

    response = add(admin, class_3p, pia, sam)

    assert response.status_code == 302
    assert members(class_3p) == set()


def test_adds_by_other_routes_such_as_a_roster_sync_are_not_held(class_3p, sam):
    joined = group_learners_add(group=class_3p, learners=[sam], added_by=None, address=None)

    assert joined == 1
    assert members(class_3p) == {"sam.second"}
