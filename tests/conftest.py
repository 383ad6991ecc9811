"""Shared fixtures: a few named people, and the sandbox upstream over real HTTP."""

from datetime import date

import pytest
from django.contrib.auth.models import Group, User

from learners.models import Learner, Level
from portal.access import STAFF_GROUP
from sandbox.server import DEMO_API_KEY, start_sandbox

PASSWORD = "correct-horse-battery"


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Hash test passwords cheaply: the real hasher is deliberately slow."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def staff(db) -> User:
    """A member of the partner's staff."""
    user = User.objects.create_user("sam.staff", password=PASSWORD)
    user.groups.add(Group.objects.get(name=STAFF_GROUP))
    return user


@pytest.fixture
def superuser(db) -> User:
    return User.objects.create_superuser("root.admin", password=PASSWORD)


def make_learner(username: str, upstream_user_id: str) -> Learner:
    """Create an active learner with a sign-in account, as registration leaves it."""
    user = User.objects.create_user(username, password=PASSWORD)
    return Learner.objects.create(
        user=user,
        username=username,
        first_name=username.split(".")[0].title(),
        last_name="Pupil",
        dob=date(2010, 5, 17),
        level=Level.SECONDARY,
        upstream_user_id=upstream_user_id,
        status=Learner.Status.ACTIVE,
    )


@pytest.fixture
def learner(db) -> Learner:
    return make_learner("lee.learner", "u-lee")


@pytest.fixture
def other_learner(db) -> Learner:
    return make_learner("olive.other", "u-olive")


@pytest.fixture
def staff_client(client, staff):
    client.force_login(staff)
    return client


@pytest.fixture
def learner_client(client, learner):
    client.force_login(learner.user)
    return client


@pytest.fixture
def upstream(settings):
    """The sandbox upstream on a free port, with the portal's settings pointed at it."""
    with start_sandbox(port=0, api_key=DEMO_API_KEY) as running:
        settings.PARTNER_API_BASE_URL = running.base_url
        settings.PARTNER_API_KEY = DEMO_API_KEY
        settings.PARTNER_API_TIMEOUT = (2.0, 5.0)
        yield running
