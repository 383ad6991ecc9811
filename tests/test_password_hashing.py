"""Passwords are stored with Argon2id at OWASP's parameters; older hashes are upgraded."""

import importlib

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher, make_password
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from tests.factories import PASSWORD, make_learner

pytestmark = pytest.mark.django_db

OWASP_PREFIX = "argon2$argon2id$v=19$m=19456,t=2,p=1$"


@pytest.fixture
def portal_hashers(settings):
    """The hashers production runs with, instead of the suite's fast one."""
    production = importlib.import_module("portal.settings")
    settings.PASSWORD_HASHERS = production.PASSWORD_HASHERS
    return settings


def sign_in(username: str, password: str):
    return Client().post("/accounts/login/", {"username": username, "password": password})


def test_a_new_password_is_argon2id_at_owasps_parameters(portal_hashers):
    assert make_password(PASSWORD).startswith(OWASP_PREFIX)
    learner = make_learner("ada.argon", "u-ada")

    assert learner.user.password.startswith(OWASP_PREFIX)
    assert PASSWORD not in learner.user.password


def test_a_pbkdf2_password_still_signs_in_and_is_upgraded(portal_hashers):
    learner = make_learner("pip.pbkdf2", "u-pip")
    hasher = PBKDF2PasswordHasher()
    learner.user.password = hasher.encode(PASSWORD, hasher.salt(), iterations=1000)
    learner.user.save()

    refused = sign_in("pip.pbkdf2", "not-the-password")
    learner.user.refresh_from_db()
    assert refused.status_code == 200
    assert learner.user.password.startswith("pbkdf2_sha256$1000$")  # a wrong one changes nothing

    response = sign_in("pip.pbkdf2", PASSWORD)

    assert response.status_code == 302 and response["Location"] == "/"
    learner.user.refresh_from_db()
    assert learner.user.password.startswith(OWASP_PREFIX)
    assert sign_in("pip.pbkdf2", PASSWORD)["Location"] == "/"  # the new hash checks


def test_raised_parameters_are_applied_at_the_next_sign_in(portal_hashers):
    learner = make_learner("ray.raised", "u-ray")
    assert learner.user.password.startswith(OWASP_PREFIX)
    portal_hashers.PASSWORD_ARGON2_MEMORY_KIB = 32 * 1024
    portal_hashers.PASSWORD_ARGON2_TIME_COST = 3

    response = sign_in("ray.raised", PASSWORD)

    assert response.status_code == 302 and response["Location"] == "/"
    learner.user.refresh_from_db()
    assert learner.user.password.startswith("argon2$argon2id$v=19$m=32768,t=3,p=1$")


@pytest.mark.parametrize(
    "variable, value",
    [
        ("PASSWORD_ARGON2_TIME_COST", "0"),
        ("PASSWORD_ARGON2_PARALLELISM", "0"),
        ("PASSWORD_ARGON2_MEMORY_KIB", "4"),
    ],
)
def test_impossible_parameters_stop_the_portal_starting(monkeypatch, variable, value):
    import portal.settings as production

    monkeypatch.setenv(variable, value)
    try:
        with pytest.raises(ImproperlyConfigured, match="PASSWORD_ARGON2_"):
            importlib.reload(production)
    finally:
        monkeypatch.delenv(variable)
        importlib.reload(production)
