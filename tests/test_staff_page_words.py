"""Small things staff read: links they may follow, their own name, the upstream's codes."""

import pytest

from accounts.models import StaffRole
from assessments.upstream_terms import upstream_term
from tests.factories import make_attempt, make_staff


@pytest.fixture
def teacher(db):
    return make_staff("tara.teacher", role=StaffRole.TEACHER)


def test_a_teacher_is_not_offered_registering_from_a_file_they_cannot_open(client, teacher):
    client.force_login(teacher)

    page = client.get("/learners/")

    assert page.status_code == 200
    assert "Register a learner" in page.content.decode()
    assert client.get("/learners/import/").status_code == 404
    assert "Register many learners from a file" not in page.content.decode()
    assert 'href="/learners/import/"' not in page.content.decode()


def test_a_safeguarding_lead_is_still_offered_registering_from_a_file(staff_client):
    page = staff_client.get("/learners/").content.decode()

    assert staff_client.get("/learners/import/").status_code == 200
    assert 'href="/learners/import/"' in page


def test_the_header_names_staff_by_their_full_name(client, teacher):
    teacher.first_name, teacher.last_name = "Tara", "Patel"
    teacher.save()
    client.force_login(teacher)

    page = client.get("/learners/").content.decode()

    assert '<span class="signed-in-as">Tara Patel</span>' in page
    assert "tara.teacher" not in page


def test_the_header_names_staff_without_a_name_by_their_username(client, teacher):
    client.force_login(teacher)

    page = client.get("/learners/").content.decode()

    assert '<span class="signed-in-as">tara.teacher</span>' in page


def test_the_attempt_page_says_the_upstreams_codes_in_staff_words(staff_client, learner):
    attempt = make_attempt(learner)
    attempt.offer_status, attempt.target_group = "AVAILABLE", "PRIMARY"
    attempt.save()

    response = staff_client.get(f"/learners/{learner.pk}/attempts/{attempt.assessment_id}/")

    page = response.content.decode()
    assert response.status_code == 200
    assert "<dd>Available</dd>" in page
    assert "<dd>Primary</dd>" in page
    assert "AVAILABLE" not in page and "PRIMARY" not in page


def test_an_unknown_code_is_shown_humanised(staff_client, learner):
    attempt = make_attempt(learner)
    attempt.offer_status, attempt.target_group = "AWAITING_REVIEW", "YEAR_10"
    attempt.save()

    page = staff_client.get(f"/learners/{learner.pk}/attempts/{attempt.assessment_id}/")

    assert "<dd>Awaiting review</dd>" in page.content.decode()
    assert "<dd>Year 10</dd>" in page.content.decode()
    assert "AWAITING_REVIEW" not in page.content.decode()


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("available", "Available"),
        ("FURTHER_EDUCATION", "Further education"),
        ("NO_ASSESSMENT_AVAILABLE", "None available"),
        ("Year 10", "Year 10"),  # already words: as given
        ("ready-ish", "ready-ish"),
    ],
)
def test_upstream_terms_are_known_words_or_as_given(value, shown):
    assert upstream_term(value) == shown


@pytest.mark.django_db
def test_the_learner_record_names_staff_as_the_header_does(staff_client, staff, learner):
    from followups.services import followup_open_for_learner_request
    from privacy.holds import records_hold_place

    staff.first_name, staff.last_name = "Sam", "Okafor"
    staff.save()
    learner.registered_by = staff
    learner.save(update_fields=["registered_by"])
    follow_up = followup_open_for_learner_request(learner=learner)
    follow_up.assignee = staff
    follow_up.save(update_fields=["assignee"])
    records_hold_place(learner=learner, placed_by=staff)

    response = staff_client.get(f"/learners/{learner.pk}/")

    page = response.content.decode()
    assert response.status_code == 200
    assert "assigned to Sam Okafor" in page
    assert "by Sam Okafor" in page  # registered by
    assert "Placed by Sam Okafor" in page
    assert "sam.staff" not in page.split("</header>", 1)[1]
