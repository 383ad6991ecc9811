"""Signing in with a school account in Chromium, through a real OpenID Connect provider.

The provider (oidc-provider-mock, tests/identity_provider.py) runs on loopback as the portal's
generic provider; Chromium presses the sign-in page's button, which POSTs to the portal, which
redirects to the provider (the CSP's form-action must let that redirect through), signs in as a
subject there, and comes back to the portal's callback.
"""

import time
from urllib.parse import urlsplit

import pyotp
import pytest

from accounts.models import StaffRole
from audit.models import AuditEvent
from tests.browsing import second_factor_given_minutes_ago, violations
from tests.factories import make_learner, make_staff
from tests.identity_provider import (
    BUTTON,
    running_identity_provider,
    school_claims,
    sign_in_with_school_account,
    use_identity_provider,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def provider(settings):
    with running_identity_provider() as running:
        use_identity_provider(settings, running)
        yield running


@pytest.fixture
def page(browser):
    page = browser.new_page()
    yield page
    page.close()


@pytest.fixture
def teacher(db):
    user = make_staff("sam.staff")
    user.email = "sam.staff@school.example"
    user.save(update_fields=["email"])
    return user


def heading(page) -> str:
    return page.locator("main h1").inner_text()


def test_a_member_of_staff_signs_in_with_their_school_account(page, live_server, provider, teacher):
    sign_in_with_school_account(
        page, live_server.url, provider, "sam", school_claims("sam.staff@school.example")
    )

    assert page.url == live_server.url + "/dashboard/"
    assert page.inner_text(".signed-in-as") == "sam.staff"
    assert AuditEvent.objects.filter(action="sso_linked", actor=teacher).count() == 1


@pytest.mark.mfa
def test_a_lead_signs_in_with_their_school_account_sets_up_a_factor_and_steps_up(
    browser, live_server, provider, settings
):
    """Through the provider, to the forced setup, an authenticator app whose codes pyotp
    computes from the key on the page, then the alerts page asking for a code again."""
    settings.MFA_TOTP_TOLERANCE = 1  # the step-up's code is the next one, not the setup's
    lead = make_staff("dee.lead", role=StaffRole.DSL)
    lead.email = "dee.lead@school.example"
    lead.save(update_fields=["email"])
    base = live_server.url
    context = browser.new_context()
    page = context.new_page()

    sign_in_with_school_account(page, base, provider, "dee", school_claims(lead.email))

    assert page.url == base + "/accounts/2fa/"
    assert "Every member of staff gives a second factor" in page.inner_text(".messages")
    page.goto(base + "/safeguarding/")
    assert page.url == base + "/accounts/2fa/"  # nothing else first
    page.click("a[href='/accounts/2fa/totp/activate/']")
    key = "".join(page.inner_text("#authenticator_secret").split())
    totp = pyotp.TOTP(key)
    page.fill("#id_code", totp.now())
    with page.expect_navigation():
        page.click("main button[type=submit]")
    assert urlsplit(page.url).path == "/accounts/2fa/recovery-codes/"
    page.goto(base + "/safeguarding/")
    assert urlsplit(page.url).path == "/safeguarding/"
    assert heading(page) == "Safeguarding alerts"

    second_factor_given_minutes_ago(context, settings.MFA_STEP_UP_MINUTES + 1)
    page.goto(base + "/safeguarding/")
    assert urlsplit(page.url).path == "/accounts/2fa/reauthenticate/"
    page.fill("#id_code", totp.at(time.time() + totp.interval))
    with page.expect_navigation():
        page.click("main button[type=submit]")
    assert urlsplit(page.url).path == "/safeguarding/"
    assert heading(page) == "Safeguarding alerts"
    context.close()


def test_an_account_of_another_domain_is_refused_with_what_to_ask(
    page, live_server, provider, teacher
):
    teacher.email = "sam.staff@elsewhere.example"
    teacher.save(update_fields=["email"])

    sign_in_with_school_account(
        page, live_server.url, provider, "sam", school_claims("sam.staff@elsewhere.example")
    )

    assert heading(page) == "This account is not one of your school's"
    assert "ask your school's portal admin to add its domain" in page.inner_text("main")
    assert page.get_by_role("link", name="Back to the sign-in page").is_visible()
    assert page.locator(".signed-in-as").count() == 0
    refusal = AuditEvent.objects.get(action="sso_refused")
    assert refusal.detail == {
        "provider": "oidc",
        "reason": "domain_not_allowed",
        "domain": "elsewhere.example",
    }


def test_an_identity_no_account_has_is_refused_and_nothing_is_made(
    page, live_server, provider, teacher
):
    sign_in_with_school_account(
        page, live_server.url, provider, "new", school_claims("new.teacher@school.example")
    )

    assert heading(page) == "No portal account has this email address"
    assert "Signing in with a school account never makes a portal account" in page.inner_text(
        "main"
    )
    assert page.locator(".signed-in-as").count() == 0
    assert AuditEvent.objects.get(action="sso_refused").detail["reason"] == "no_account"


def test_a_secondary_pupil_signs_in_with_their_school_account(page, live_server, provider, db):
    pupil = make_learner("lee.pupil", "u-lee")
    pupil.email = "lee.pupil@school.example"
    pupil.save(update_fields=["email"])

    sign_in_with_school_account(
        page, live_server.url, provider, "lee", school_claims("lee.pupil@school.example")
    )

    assert page.url == live_server.url + "/me/"
    assert page.inner_text(".signed-in-as") == "This is Lee's session."


@pytest.mark.parametrize("width", [360, 1280])
def test_the_sign_in_page_with_its_button_and_a_refusal_pass_axe(
    browser, live_server, provider, db, width
):
    page = browser.new_page(viewport={"width": width, "height": 800})
    page.goto(live_server.url + "/accounts/login/")
    assert page.get_by_role("button", name=BUTTON).is_visible()
    assert violations(page) == []

    sign_in_with_school_account(
        page, live_server.url, provider, "new", school_claims("new.teacher@school.example")
    )
    assert heading(page) == "No portal account has this email address"
    assert violations(page) == []
    page.close()
