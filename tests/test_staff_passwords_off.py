"""A school turns staff passwords off once single sign-on is set up (issue 29, item 2).

Then its staff sign in only with their school account: the right password is refused with the
way in. Superusers keep a password for recovery; learners are not affected; and without a
provider configured the setting neither shows nor applies.
"""

from django.core.cache import cache
from django.test import Client

from accounts.models import StaffRole
from accounts.services import staff_role_set
from audit.models import AuditEvent
from schools.models import PartnerSettings, School
from tests.factories import PASSWORD, make_learner, make_staff, settings_form
from tests.journeys import page_showing

LOGIN = "/accounts/login/"
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
SCHOOL_ACCOUNT_ONLY = "Your school&#x27;s staff sign in with their school account, not a password."


def password_sign_in(username: str) -> tuple[int, str]:
    """Post the username and the right password to the sign-in page: its status and page."""
    response = Client().post(LOGIN, {"username": username, "password": PASSWORD})
    return response.status_code, response.content.decode()


# Staff passwords off ------------------------------------------------------------------------


def turn_passwords_off(school: School | None = None) -> None:
    PartnerSettings.objects.filter(school=school or School.default()).update(
        staff_passwords_off=True
    )
    cache.clear()


def sign_in_page_after(username: str) -> str:
    """Return the sign-in page shown again after the right password (not signed in)."""
    status, html = password_sign_in(username)
    assert status == 200, f"{username} was signed in"
    assert "<h1>Sign in</h1>" in html
    return html


def test_the_settings_box_shows_only_once_single_sign_on_is_set_up(db, settings):
    client = Client()
    client.force_login(make_staff("ada.admin", role=StaffRole.ADMIN))
    html = page_showing(client, "/settings/", "Who sees results")
    assert "staff_passwords_off" not in html

    settings.SOCIALACCOUNT_PROVIDERS = TRUST_PROVIDER
    page_showing(client, "/settings/", 'name="staff_passwords_off"')
    response = client.post("/settings/", settings_form(staff_passwords_off=True))

    assert response.status_code == 302
    assert PartnerSettings.objects.get(school=School.default()).staff_passwords_off
    assert AuditEvent.objects.filter(
        action=AuditEvent.Action.SETTINGS_CHANGED, detail__staff_passwords_off=True
    ).exists()


def test_with_passwords_off_a_teachers_right_password_is_refused_with_the_way_in(db, settings):
    make_staff("tara.teacher", role=StaffRole.TEACHER)
    settings.SOCIALACCOUNT_PROVIDERS = TRUST_PROVIDER
    PartnerSettings.current()
    turn_passwords_off()

    html = sign_in_page_after("tara.teacher")

    assert SCHOOL_ACCOUNT_ONLY in html
    assert "Use the button for your school account on this page." in html
    # A wrong password still gets the usual words: the rule tells a guesser nothing.
    wrong = Client().post(LOGIN, {"username": "tara.teacher", "password": "not-it"})
    assert "Enter a correct username and password." in wrong.content.decode()
    assert SCHOOL_ACCOUNT_ONLY not in wrong.content.decode()


def test_with_passwords_off_superusers_and_learners_still_use_passwords(superuser, settings, db):
    settings.SOCIALACCOUNT_PROVIDERS = TRUST_PROVIDER
    make_learner("lee.learner", "u-lee")
    PartnerSettings.current()
    turn_passwords_off()

    for username in ("root.admin", "lee.learner"):
        assert password_sign_in(username)[0] == 302, username


def test_without_a_provider_the_setting_has_no_effect(db, settings):
    make_staff("tara.teacher", role=StaffRole.TEACHER)
    settings.SOCIALACCOUNT_PROVIDERS = {}
    PartnerSettings.current()
    turn_passwords_off()

    assert password_sign_in("tara.teacher")[0] == 302


def test_staff_of_two_schools_are_held_to_it_when_either_turned_passwords_off(db, settings):
    alpha = School.default()
    bravo = School.objects.create(code="BRAVO", name="Bravo Academy")
    settings.SOCIALACCOUNT_PROVIDERS = TRUST_PROVIDER
    both = make_staff("bo.both", role=StaffRole.TEACHER, school=alpha)
    staff_role_set(user=both, role=StaffRole.TEACHER, school_id=bravo.pk)
    make_staff("al.alpha", role=StaffRole.TEACHER, school=alpha)
    make_staff("tia.trust", role=StaffRole.TRUST_ADMIN)  # works in every school
    PartnerSettings.of(bravo.pk)
    turn_passwords_off(bravo)

    assert SCHOOL_ACCOUNT_ONLY in sign_in_page_after("bo.both")
    assert SCHOOL_ACCOUNT_ONLY in sign_in_page_after("tia.trust")
    assert password_sign_in("al.alpha")[0] == 302
