"""One subscription for the trust: every school registers under the partner's one API key."""

import pytest
import responses
from django.contrib.auth.models import User

from learners.models import Learner
from schools.context import working_in
from schools.models import School
from tests.factories import VALID, make_learner, make_staff, signed_in

CREATE_URL = "http://127.0.0.1:8001/plapi/v1/partners/users/create-learner"


@pytest.fixture
def schools(db) -> tuple[School, School]:
    School.objects.filter(code="SCHOOL").update(name="Oak Primary")
    return School.objects.get(code="SCHOOL"), School.objects.create(code="100002", name="Ash")


def register(user: User, username: str):
    return signed_in(user).post("/learners/new/", {**VALID, "username": username})


def test_learners_of_two_schools_get_distinct_ids_from_the_one_subscription(upstream, schools):
    oak, ash = schools
    oak_lead, ash_lead = make_staff("oona.lead", school=oak), make_staff("asha.lead", school=ash)

    first = register(oak_lead, "ola.oak")
    second = register(ash_lead, "amy.ash")

    assert first.status_code == second.status_code == 302
    ola, amy = Learner.objects.get(username="ola.oak"), Learner.objects.get(username="amy.ash")
    assert (ola.school, amy.school) == (oak, ash)
    assert ola.upstream_user_id and amy.upstream_user_id
    assert ola.upstream_user_id != amy.upstream_user_id
    # The sandbox knows one partner (its one API key): both learners are its.
    registered = {learner.user_id for learner in upstream.state.learners.values()}
    assert registered == {ola.upstream_user_id, amy.upstream_user_id}


def test_a_username_taken_in_one_school_is_refused_in_another(upstream, schools):
    oak, ash = schools
    oak_lead, ash_lead = make_staff("oona.lead", school=oak), make_staff("asha.lead", school=ash)
    assert register(oak_lead, "ola.oak").status_code == 302
    calls = upstream.state.count(endpoint="create-learner")

    again = register(ash_lead, "OLA.Oak")

    assert again.status_code == 200
    assert "That username is already taken. Choose another." in again.content.decode()
    assert upstream.state.count(endpoint="create-learner") == calls  # refused before any call
    assert list(Learner.objects.values_list("username", "school")) == [("ola.oak", oak.pk)]


@responses.activate
def test_an_upstream_id_another_schools_learner_holds_is_never_reused(schools):
    oak, ash = schools
    with working_in(oak.pk):
        with_id = make_learner("ola.oak", "u-shared")
    assert with_id.school == oak
    responses.add(responses.POST, CREATE_URL, status=201, json={"user_id": "u-shared"})

    response = register(make_staff("asha.lead", school=ash), "amy.ash")

    assert response.status_code == 200
    assert "returned a learner id the portal cannot use" in response.content.decode()
    assert not Learner.objects.filter(username="amy.ash").exists()
    assert not User.objects.filter(username="amy.ash").exists()
    assert Learner.objects.get(upstream_user_id="u-shared") == with_id
