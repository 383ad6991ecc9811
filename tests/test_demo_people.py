"""The demo's people as a school would meet them: staff with names, pupils with someone to ask."""

import io
import logging

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from demo import trust
from demo.management.commands import demo_staff
from demo.seeding import COLLEAGUE_USERNAME
from learners.models import Learner, Level
from tests.factories import make_staff


@pytest.fixture
def seeded(db, upstream, caplog):
    """A small demo cohort, seeded as `make run` does after `manage.py demo_staff`."""
    caplog.set_level(logging.INFO)
    make_staff(demo_staff.DEMO_USERNAME, password="not-used-here")
    call_command("seed_demo", learners=6, wait=5, stdout=io.StringIO(), stderr=io.StringIO())


def test_every_demo_staff_account_has_a_full_name(seeded):
    usernames = [
        trust.DEMO_USERNAME,
        trust.DEMO_ADMIN_USERNAME,
        trust.PRIMARY_LEAD_USERNAME,
        trust.TRUST_ADMIN_USERNAME,
        trust.TRUST_LEAD_USERNAME,
        COLLEAGUE_USERNAME,
    ]

    accounts = User.objects.filter(username__in=usernames)

    assert accounts.count() == len(usernames)
    assert [user.username for user in accounts if not user.get_full_name()] == []


def test_a_demo_pupil_can_ask_for_their_class_teacher_or_the_schools_lead(seeded):
    pupil = Learner.objects.filter(level=Level.PRIMARY).first()
    client = Client()
    client.force_login(pupil.user)

    response = client.get("/me/talk/")

    page = response.content.decode()
    assert response.status_code == 200 and "Who would you like to talk to?" in page
    assert "Mr Lewis, your class teacher" in page
    assert "Mrs Okafor, who keeps children safe, in the office" in page
