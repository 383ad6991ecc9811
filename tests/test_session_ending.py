"""A signed-in session's key names its user, so that all of one account's sessions end at once.

With either engine the portal runs (the database alone, or cached_db over a shared cache), a
deactivated account's sessions are gone the moment it is saved as inactive (the staff page, the
Django admin, a command), with their cache copies and the cached user, not only refused at the
next request (issue 29, item 6).
"""

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

from accounts.models import StaffRole
from accounts.session_ending import session_keys_of
from tests.factories import make_staff, signed_in

LEARNERS = "/learners/"


@pytest.fixture
def admin(db) -> User:
    return make_staff("ada.admin", role=StaffRole.ADMIN)


@pytest.fixture
def teacher(db) -> User:
    return make_staff("tara.teacher", role=StaffRole.TEACHER)


def still_signed_in(client: Client) -> bool:
    """Say whether the client still reads the learners page; False when sent to sign in."""
    response = client.get(LEARNERS)
    if response.status_code == 200:
        return True
    assert response.status_code == 302, response.status_code
    assert response.url.startswith(f"/accounts/login/?next={LEARNERS}"), response.url
    return False


@pytest.fixture(params=["accounts.db_sessions", "accounts.sessions"])
def session_engine(request, settings):
    """Each engine the portal runs: the database alone, and cached_db over a shared cache."""
    settings.SESSION_ENGINE = request.param
    if request.param == "accounts.sessions":
        settings.ROW_CACHE_SECONDS = 300  # the signed-in user kept in the cache too
    return request.param


def cached_session_keys(user: User) -> list[str]:
    """Return the cache's copies of the user's sessions (cached_db's keys)."""
    prefix = "django.contrib.sessions.cached_db"
    return [key for key in session_keys_of(user.pk) if cache.get(prefix + key) is not None]


@pytest.mark.parametrize("where", ["staff page", "anywhere else"])
def test_a_deactivated_accounts_sessions_end_at_once(session_engine, admin, teacher, where):
    browser = signed_in(teacher)
    assert still_signed_in(browser)
    assert session_keys_of(teacher.pk)
    if session_engine == "accounts.sessions":
        assert cached_session_keys(teacher)

    if where == "staff page":
        response = signed_in(admin).post(
            f"/staff/{teacher.pk}/",
            {"role": StaffRole.TEACHER, "email": "tara@school.example"},
        )
        assert response.status_code == 302
    else:  # the Django admin, a command: a save of the account
        account = User.objects.get(pk=teacher.pk)
        account.is_active = False
        account.save()

    assert not User.objects.get(pk=teacher.pk).is_active
    # Gone now, not only refused at the next request.
    assert session_keys_of(teacher.pk) == []
    assert cache.get(f"portal.user:{teacher.pk}") is None
    assert not still_signed_in(browser)


def test_saving_an_account_that_was_already_inactive_ends_nothing(teacher):
    browser = signed_in(teacher)
    # An inactive account's session, left from before the account was loaded this way.
    User.objects.filter(pk=teacher.pk).update(is_active=False)
    account = User.objects.get(pk=teacher.pk)
    account.first_name = "Tara"
    account.save()

    assert session_keys_of(teacher.pk)  # only a change of is_active ends sessions
    assert not still_signed_in(browser)  # and Django refuses an inactive account anyway


def test_signed_in_sessions_are_keyed_by_their_user_with_either_engine(session_engine, teacher):
    signed_in(teacher)

    [key] = session_keys_of(teacher.pk)
    assert key.startswith(f"u{teacher.pk}-") and len(key) == 40
