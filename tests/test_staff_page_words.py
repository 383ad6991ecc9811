"""Small things staff read: links they may follow, their own name, the upstream's codes."""

import pytest

from accounts.models import StaffRole
from tests.factories import make_staff


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
