"""Staff see the sign-in locks in force and lift them, audited; no one else reaches the page."""

import re

import pytest
from django.test import Client

from accounts.models import SignInLock
from audit.models import AuditEvent
from tests.factories import PASSWORD, make_staff

LOCKS = "/sign-in-locks/"
LOGIN = "/accounts/login/"
CLASSROOM = "192.0.2.10"
SCHOOL = "203.0.113.5"
WRONG = "not-the-password"
STAFF_DESK = "198.51.100.20"


def sign_in(username: str, password: str, *, ip: str = CLASSROOM):
    return Client().post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=ip)


def lock_out(username: str, *, ip: str = CLASSROOM, times: int = 5) -> None:
    for _ in range(times):
        sign_in(username, WRONG, ip=ip)


def text(response) -> str:
    """Return the page's text without markup, spaces squeezed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


def lift(client: Client, lock: SignInLock):
    return client.post(f"{LOCKS}{lock.pk}/lift/", REMOTE_ADDR=STAFF_DESK)


def test_a_locked_learner_is_listed_with_what_is_locked_and_until_when(staff_client, learner):
    lock_out("lee.learner")

    page = text(staff_client.get(LOCKS))

    assert "Lee Pupil" in page
    assert f"Signing in to this account from {CLASSROOM}" in page
    assert re.search(r"\d\d:\d\d, in 1[45] minutes", page), page
    assert "Lift the lock on Lee Pupil" in page


def test_staff_lift_a_learners_lock_audited_and_the_learner_signs_in_again(
    staff_client, staff, learner
):
    lock_out("lee.learner")
    lock = SignInLock.objects.get()

    response = lift(staff_client, lock)

    assert response.status_code == 302 and response.url == LOCKS
    page = text(staff_client.get(LOCKS))
    assert f"The lock on Lee Pupil from {CLASSROOM} is lifted." in page
    assert "No sign-in is locked at the moment." in page
    assert sign_in("lee.learner", PASSWORD).status_code == 302
    event = AuditEvent.objects.get(action=AuditEvent.Action.SIGN_IN_LOCK_LIFTED)
    assert (event.actor, event.learner, event.ip_address) == (staff, learner, STAFF_DESK)
    assert event.detail == {
        "scope": "account_address",
        "account_id": learner.user.pk,
        "locked_address": CLASSROOM,
    }
    lock.refresh_from_db()
    assert (lock.lifted_by, lock.lifted_at is not None) == (staff, True)


def test_a_schools_address_lock_is_listed_and_lifted_for_everyone_there(
    admin_client, learner, other_learner
):
    # Addresses and staff accounts are the partner admins' (a superuser is one).
    staff_client = admin_client
    for number in range(100):
        sign_in(f"guess{number}", WRONG, ip=SCHOOL)
    assert "Too many attempts" in text(sign_in("lee.learner", PASSWORD, ip=SCHOOL))
    page = text(staff_client.get(LOCKS))
    assert f"{SCHOOL} Every sign-in from this address" in page

    lift(staff_client, SignInLock.objects.get(kind="address"))

    assert f"Sign-in from {SCHOOL} is open again." in text(staff_client.get(LOCKS))
    assert sign_in("lee.learner", PASSWORD, ip=SCHOOL).status_code == 302
    assert sign_in("olive.other", PASSWORD, ip=SCHOOL).status_code == 302
    event = AuditEvent.objects.get(action=AuditEvent.Action.SIGN_IN_LOCK_LIFTED)
    assert event.learner is None and event.detail["locked_address"] == SCHOOL


def test_a_staff_members_lock_names_their_username(admin_client, db):
    staff_client = admin_client
    make_staff("tess.teacher")
    lock_out("tess.teacher", times=5)
    lock_out("Tess.Teacher", ip=SCHOOL, times=5)

    page = text(staff_client.get(LOCKS))

    assert "tess.teacher Signing in to this account from any address" in page
    assert page.count("Lift the lock on tess.teacher") == 3

    lift(staff_client, SignInLock.objects.get(kind="account"))

    page = text(staff_client.get(LOCKS))
    assert "The lock on tess.teacher from every address is lifted." in page
    assert page.count("Lift the lock on tess.teacher") == 2


def test_lifting_a_lock_that_already_ended_says_so_and_audits_nothing(staff_client, learner):
    lock_out("lee.learner")
    lock = SignInLock.objects.get()
    lift(staff_client, lock)

    response = lift(staff_client, lock)

    assert response.url == LOCKS
    assert "That lock had already ended or been lifted." in text(staff_client.get(LOCKS))
    assert AuditEvent.objects.filter(action=AuditEvent.Action.SIGN_IN_LOCK_LIFTED).count() == 1


def test_the_staff_navigation_links_to_the_locks_page(staff_client):
    assert f'href="{LOCKS}"' in staff_client.get("/learners/").content.decode()


@pytest.mark.parametrize("method", ["get", "post"])
def test_learners_get_404_and_anonymous_users_sign_in_at_the_locks_pages(
    client, learner, other_learner, method
):
    lock_out("olive.other")
    lock = SignInLock.objects.get()
    paths = [LOCKS, f"{LOCKS}{lock.pk}/lift/"]

    for path in paths:
        assert getattr(client, method)(path).url == f"{LOGIN}?next={path}"
    client.force_login(learner.user)
    for path in paths:
        assert getattr(client, method)(path).status_code == 404

    lock.refresh_from_db()
    assert lock.lifted_at is None


def test_the_learners_record_says_until_when_sign_in_is_locked(staff_client, learner):
    record = f"/learners/{learner.pk}/"
    unlocked = staff_client.get(record)
    assert unlocked.status_code == 200
    assert f"<h1>{learner.display_name}</h1>" in unlocked.content.decode()
    assert "Locked until" not in text(unlocked)

    lock_out("lee.learner")

    page = text(staff_client.get(record))
    assert re.search(r"Locked until \d\d:\d\d \(in 1[45] minutes\) after too many", page), page
    assert f'href="{LOCKS}"' in staff_client.get(record).content.decode()
