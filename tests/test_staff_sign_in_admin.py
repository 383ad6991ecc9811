"""How staff sign in, as admins see and change it (issue 29, items 2 and 6).

The staff pages show each account's school identities, password and second factor; an admin
unlinks an identity, resets another's second factor and ends another's sessions; anyone on
staff signs out everywhere. (Deactivation: tests/test_session_ending.py; the passwords-off
setting itself: tests/test_staff_passwords_off.py.)
"""

import re

import pytest
from allauth.mfa.models import Authenticator
from allauth.socialaccount.models import SocialAccount
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

from accounts.models import StaffRole
from accounts.school_choice import SESSION_KEY as SCHOOL_SESSION_KEY
from accounts.services import staff_role_set
from audit.models import AuditEvent
from schools.models import PartnerSettings, School
from tests.factories import PASSWORD, make_staff, signed_in
from tests.journeys import page_showing

LOGIN = "/accounts/login/"
LEARNERS = "/learners/"
# One OpenID Connect provider configured (never contacted: nothing here follows its button).
TRUST_PROVIDER = {
    "openid_connect": {
        "APPS": [
            {
                "provider_id": "oidc",
                "name": "Trust",
                "client_id": "x",
                "secret": "y",
                "settings": {"server_url": "http://127.0.0.1:9/"},
            }
        ]
    }
}


@pytest.fixture
def admin(db) -> User:
    return make_staff("ada.admin", role=StaffRole.ADMIN)


@pytest.fixture
def teacher(db) -> User:
    return make_staff("tara.teacher", role=StaffRole.TEACHER)


def password_sign_in(username: str) -> tuple[int, str]:
    """Post the username and the right password to the sign-in page: its status and page."""
    response = Client().post(LOGIN, {"username": username, "password": PASSWORD})
    return response.status_code, response.content.decode()


def still_signed_in(client: Client) -> bool:
    """Say whether the client still reads the learners page; False when sent to sign in."""
    response = client.get(LEARNERS)
    if response.status_code == 200:
        return True
    assert response.status_code == 302, response.status_code
    assert response.url.startswith(f"{LOGIN}?next={LEARNERS}"), response.url
    return False


def staff_row(html: str, username: str) -> str:
    """Return the text of one account's row on the staff list."""
    rows = re.findall(r'<li class="card-row">(.*?)</li>', html, re.S)
    mine = [row for row in rows if f">{username}<" in row]
    assert len(mine) == 1, f"no single row for {username}"
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", mine[0]))


def give_factor(user: User, *kinds: str) -> None:
    for kind in kinds:
        Authenticator.objects.create(user=user, type=kind, data={})


def link(user: User, provider: str = "google") -> SocialAccount:
    return SocialAccount.objects.create(user=user, provider=provider, uid=f"{provider}-{user.pk}")


def staff_events(**detail) -> list[AuditEvent]:
    """Return the staff-account events whose detail holds all of `detail`."""
    return [
        event
        for event in AuditEvent.objects.filter(action=AuditEvent.Action.STAFF_CHANGED)
        if all(event.detail.get(key) == value for key, value in detail.items())
    ]


# What the staff pages show ------------------------------------------------------------------


def test_the_staff_list_shows_how_each_account_signs_in(admin, teacher):
    link(teacher)
    dsl = make_staff("dee.dsl", None)
    link(dsl, "microsoft")
    give_factor(dsl, Authenticator.Type.TOTP, Authenticator.Type.RECOVERY_CODES)
    give_factor(admin, Authenticator.Type.WEBAUTHN)

    html = page_showing(signed_in(admin), "/staff/", "School account (Google)")

    tara = staff_row(html, "tara.teacher")
    assert "School account (Google), Password" in tara
    assert "No second factor yet" in tara
    dee = staff_row(html, "dee.dsl")
    assert "School account (Microsoft)" in dee and "Second factor: authenticator app" in dee
    assert "Password" not in dee
    ada = staff_row(html, "ada.admin")
    assert "Signs in with: Password" in ada and "Second factor: passkey or security key" in ada
    assert "School account" not in ada


def test_an_accounts_page_shows_how_they_sign_in_and_what_can_be_done(admin, teacher):
    link(teacher)
    give_factor(teacher, Authenticator.Type.TOTP)

    html = page_showing(signed_in(admin), f"/staff/{teacher.pk}/", "How they sign in")

    assert "School account (Google)" in html and "Second factor: authenticator app" in html
    assert f'href="/staff/{teacher.pk}/school-account/unlink/"' in html
    assert f'href="/staff/{teacher.pk}/second-factor/reset/"' in html
    assert f'href="/staff/{teacher.pk}/sessions/end/"' in html


def test_an_admins_own_page_offers_signing_out_everywhere_not_a_reset(admin):
    give_factor(admin, Authenticator.Type.TOTP)

    html = page_showing(signed_in(admin), f"/staff/{admin.pk}/", "How they sign in")

    assert 'href="/sign-out-everywhere/"' in html
    assert "/second-factor/reset/" not in html and "/sessions/end/" not in html


# Unlinking a school identity ----------------------------------------------------------------


def test_unlinking_removes_the_school_account_and_is_audited(admin, teacher):
    identity = link(teacher)
    client = signed_in(admin)
    url = f"/staff/{teacher.pk}/school-account/unlink/"
    page_showing(client, url, "Unlink School account (Google)")

    response = client.post(url, {"identity": identity.pk, "confirm": "yes"}, follow=True)

    assert response.redirect_chain[-1][0] == f"/staff/{teacher.pk}/"
    assert "School account (Google) is no longer linked to tara.teacher." in (
        response.content.decode()
    )
    assert not SocialAccount.objects.filter(user=teacher).exists()
    [event] = staff_events(account="tara.teacher", school_account_unlinked="google")
    assert event.actor_username == "ada.admin"


def test_a_post_without_the_confirming_button_unlinks_nothing(admin, teacher):
    identity = link(teacher)
    url = f"/staff/{teacher.pk}/school-account/unlink/"

    response = signed_in(admin).post(url, {"identity": identity.pk})

    assert response.status_code == 200 and "Unlink tara.teacher" in response.content.decode()
    assert SocialAccount.objects.filter(user=teacher).exists()


def test_another_accounts_identity_cannot_be_unlinked_through_this_one(admin, teacher):
    other = make_staff("tom.teacher", role=StaffRole.TEACHER)
    identity = link(other)

    response = signed_in(admin).post(
        f"/staff/{teacher.pk}/school-account/unlink/",
        {"identity": identity.pk, "confirm": "yes"},
        follow=True,
    )

    assert "That school account is not linked to this account." in response.content.decode()
    assert SocialAccount.objects.filter(user=other).exists()
    assert not staff_events(school_account_unlinked="google")


# Resetting a second factor ------------------------------------------------------------------


def test_a_reset_removes_every_factor_signs_them_out_and_audits_both_names(admin, teacher):
    give_factor(
        teacher,
        Authenticator.Type.TOTP,
        Authenticator.Type.WEBAUTHN,
        Authenticator.Type.RECOVERY_CODES,
    )
    teachers_browser = signed_in(teacher)
    assert still_signed_in(teachers_browser)
    client = signed_in(admin)
    url = f"/staff/{teacher.pk}/second-factor/reset/"
    page_showing(client, url, "Reset the second factor")

    response = client.post(url, {"confirm": "yes"}, follow=True)

    assert "tara.teacher&#x27;s second factor is reset and they are signed out everywhere." in (
        response.content.decode()
    )
    assert not Authenticator.objects.filter(user=teacher).exists()
    assert not still_signed_in(teachers_browser)
    assert still_signed_in(client)
    [event] = staff_events(account="tara.teacher", second_factor_reset=True)
    assert event.actor_username == "ada.admin" and event.detail["sessions_ended"] == 1


def test_after_a_reset_they_set_up_a_new_factor_at_their_next_sign_in(admin, teacher, settings):
    give_factor(teacher, Authenticator.Type.TOTP)
    signed_in(admin).post(f"/staff/{teacher.pk}/second-factor/reset/", {"confirm": "yes"})
    settings.STAFF_MFA_REQUIRED = True

    status, _page = password_sign_in("tara.teacher")  # no second factor left to ask for
    assert status == 302
    client = signed_in(teacher)
    response = client.get(LEARNERS, follow=True)

    assert response.redirect_chain[-1][0] == "/accounts/2fa/"
    assert "Set one up now" in response.content.decode()


def test_nobody_resets_their_own_second_factor(admin):
    give_factor(admin, Authenticator.Type.TOTP)
    client = signed_in(admin)
    url = f"/staff/{admin.pk}/second-factor/reset/"
    html = page_showing(client, url, "You cannot reset your own second factor")
    assert "Reset the second factor</button>" not in html

    response = client.post(url, {"confirm": "yes"}, follow=True)

    assert "You cannot reset your own second factor: ask another admin." in (
        response.content.decode()
    )
    assert Authenticator.objects.filter(user=admin).exists()
    assert not staff_events(second_factor_reset=True)
    assert still_signed_in(client)


# Ending sessions ----------------------------------------------------------------------------


def test_ending_anothers_sessions_signs_out_each_of_their_browsers(admin, teacher):
    laptop, phone = signed_in(teacher), signed_in(teacher)
    assert still_signed_in(laptop) and still_signed_in(phone)
    client = signed_in(admin)

    response = client.post(f"/staff/{teacher.pk}/sessions/end/", {"confirm": "yes"}, follow=True)

    assert "tara.teacher is signed out everywhere (2 sessions ended)." in (
        response.content.decode()
    )
    assert not still_signed_in(laptop) and not still_signed_in(phone)
    assert still_signed_in(client)
    [event] = staff_events(account="tara.teacher", sessions_ended=2)
    assert event.actor_username == "ada.admin"
    # They sign in again as usual: ending sessions takes nothing else away.
    assert still_signed_in(signed_in(teacher))


def test_signing_out_everywhere_ends_every_own_session_this_one_too(admin, teacher):
    laptop, phone = signed_in(teacher), signed_in(teacher)
    admins = signed_in(admin)
    page_showing(laptop, "/sign-out-everywhere/", "Sign out everywhere?")

    response = laptop.post("/sign-out-everywhere/", {"confirm": "yes"}, follow=True)

    assert response.redirect_chain[-1][0] == LOGIN
    assert "You are signed out everywhere: on this device and every other." in (
        response.content.decode()
    )
    assert not still_signed_in(laptop) and not still_signed_in(phone)
    assert still_signed_in(admins)
    assert staff_events(account="tara.teacher", signed_out_everywhere=True, sessions_ended=2)


def test_the_header_leads_staff_to_sign_out_everywhere(teacher):
    html = page_showing(signed_in(teacher), LEARNERS, "Sign out everywhere")

    assert 'href="/sign-out-everywhere/"' in html


def test_learners_cannot_reach_sign_out_everywhere(learner_client):
    assert learner_client.get("/sign-out-everywhere/").status_code == 404


# Who may act on whom ------------------------------------------------------------------------

ACTIONS = ["school-account/unlink/", "second-factor/reset/", "sessions/end/"]


@pytest.mark.parametrize("action", ACTIONS)
def test_teachers_and_learners_get_404_for_the_actions(teacher, learner, admin, action):
    give_factor(admin, Authenticator.Type.TOTP)
    learners_browser = Client()
    learners_browser.force_login(learner.user)
    for client in (signed_in(teacher), learners_browser):
        for method in ("get", "post"):
            response = getattr(client, method)(f"/staff/{admin.pk}/{action}", {"confirm": "yes"})
            assert response.status_code == 404
    assert Authenticator.objects.filter(user=admin).exists()


@pytest.mark.parametrize("action", ACTIONS)
def test_a_school_admin_cannot_act_on_a_trust_admin_or_a_superuser(admin, superuser, action):
    trust_admin = make_staff("tia.trust", role=StaffRole.TRUST_ADMIN)
    client = signed_in(admin)
    for account in (trust_admin, superuser):
        give_factor(account, Authenticator.Type.TOTP)

        for method in ("get", "post"):
            response = getattr(client, method)(f"/staff/{account.pk}/{action}", {"confirm": "yes"})
            assert response.status_code == 404

        assert Authenticator.objects.filter(user=account).exists()


def test_a_trust_admin_resets_a_school_admins_second_factor(admin):
    trust_admin = make_staff("tia.trust", role=StaffRole.TRUST_ADMIN)
    give_factor(admin, Authenticator.Type.TOTP)

    response = signed_in(trust_admin).post(
        f"/staff/{admin.pk}/second-factor/reset/", {"confirm": "yes"}
    )

    assert response.status_code == 302
    assert not Authenticator.objects.filter(user=admin).exists()


@pytest.fixture
def two_schools(db) -> tuple[School, School]:
    return School.default(), School.objects.create(code="BRAVO", name="Bravo Academy")


def working_in(user: User, school: School) -> Client:
    client = signed_in(user)
    session = client.session
    session[SCHOOL_SESSION_KEY] = school.pk
    session.save()
    return client


@pytest.mark.parametrize("action", ACTIONS)
def test_one_schools_admin_cannot_act_on_another_schools_staff(two_schools, action):
    alpha, bravo = two_schools
    alpha_admin = make_staff("ada.alpha", role=StaffRole.ADMIN, school=alpha)
    bravo_teacher = make_staff("ben.bravo", role=StaffRole.TEACHER, school=bravo)
    give_factor(bravo_teacher, Authenticator.Type.TOTP)
    link(bravo_teacher)
    client = working_in(alpha_admin, alpha)

    for method in ("get", "post"):
        response = getattr(client, method)(
            f"/staff/{bravo_teacher.pk}/{action}", {"confirm": "yes"}
        )
        assert response.status_code == 404

    assert Authenticator.objects.filter(user=bravo_teacher).exists()
    assert SocialAccount.objects.filter(user=bravo_teacher).exists()


def test_someone_of_two_schools_has_their_factor_reset_by_a_trust_admin_only(two_schools):
    alpha, bravo = two_schools
    alpha_admin = make_staff("ada.alpha", role=StaffRole.ADMIN, school=alpha)
    both = make_staff("bo.both", role=StaffRole.TEACHER, school=alpha)
    make_staff_role_in(both, bravo)
    give_factor(both, Authenticator.Type.TOTP)

    response = working_in(alpha_admin, alpha).post(
        f"/staff/{both.pk}/second-factor/reset/", {"confirm": "yes"}, follow=True
    )

    assert "also works in another school: ask a trust admin" in response.content.decode()
    assert Authenticator.objects.filter(user=both).exists()


def make_staff_role_in(user: User, school: School) -> None:
    staff_role_set(user=user, role=StaffRole.TEACHER, school_id=school.pk)


# Staff passwords off, as the staff list shows them ---------------------------------------


def turn_passwords_off(school: School | None = None) -> None:
    PartnerSettings.objects.filter(school=school or School.default()).update(
        staff_passwords_off=True
    )
    cache.clear()


def test_the_staff_list_says_whose_password_is_turned_off(admin, teacher, settings):
    settings.SOCIALACCOUNT_PROVIDERS = TRUST_PROVIDER
    client = signed_in(admin)
    PartnerSettings.current()
    turn_passwords_off()

    html = page_showing(client, "/staff/", "tara.teacher")

    assert "Password (turned off: school account only)" in staff_row(html, "tara.teacher")


def test_the_staff_list_costs_no_query_per_account_with_passwords_off(
    admin, settings, django_assert_max_num_queries
):
    settings.SOCIALACCOUNT_PROVIDERS = TRUST_PROVIDER
    PartnerSettings.current()
    turn_passwords_off()
    client = signed_in(admin)
    client.get("/staff/")
    for number in range(10):
        link(make_staff(f"t{number}.teacher", role=StaffRole.TEACHER))

    # As tests/test_staff_accounts.py counts the list, and the schools with passwords off.
    with django_assert_max_num_queries(13):
        html = page_showing(client, "/staff/", "t9.teacher")

    assert "Password (turned off: school account only)" in staff_row(html, "t9.teacher")
