"""School accounts through allauth's real callback views, with recorded provider answers.

Google and Microsoft are never contacted: `responses` answers for them (discovery, token,
keys) with ID tokens signed by a test key, shaped as theirs are. The sign-in starts with the
sign-in page's POST (allauth keeps the state in the session) and comes back to the callback
with that state, so allauth's own checks (issuer, audience, expiry) run before the portal's.
"""

import json
import time
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
import requests
import responses
from allauth.mfa.models import Authenticator
from allauth.socialaccount.models import SocialAccount
from cryptography.hazmat.primitives.asymmetric import rsa
from django.contrib.auth.models import User
from django.core.management import call_command

from audit.models import AuditEvent
from learners.models import Learner, Level
from signin.checks import school_account_domains
from signin.configuration import sso_form_action, sso_providers
from tests.factories import make_learner, make_staff

SCHOOL = "school.example"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
OTHER_TENANT = "9188040d-6c67-4c5b-b112-36a304b66dad"  # Microsoft's personal accounts' tenant
GOOGLE_CLIENT = "123-portal.apps.googleusercontent.com"
MICROSOFT_CLIENT = "6731de76-14a6-49ae-97bc-6eba6914391e"
OIDC_CLIENT = "portal"
OIDC_ISSUER = "https://id.trust.example"
ENTRA = f"https://login.microsoftonline.com/{TENANT}"
KEY_ID = "test-key-1"

REFUSED_DOMAIN = "This account is not one of your school&#x27;s"
NOT_CONFIRMED = "Your school account&#x27;s email address is not confirmed"
NO_ACCOUNT = "No portal account has this email address"
SEVERAL = "More than one portal account has this email address"
NOT_ACTIVE = "Your portal account is not active"
PRIMARY = "Primary pupils sign in with their card or password"
OTHER_KIND = "This school account&#x27;s email address now belongs to another account"


@pytest.fixture(scope="module")
def signing_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(autouse=True)
def providers(settings):
    """Google, Microsoft (one tenant) and a trust's provider, as the environment sets them."""
    values = {
        "SSO_GOOGLE_CLIENT_ID": GOOGLE_CLIENT,
        "SSO_GOOGLE_CLIENT_SECRET": "google-secret",
        "SSO_GOOGLE_DOMAINS": [SCHOOL],
        "SSO_MICROSOFT_CLIENT_ID": MICROSOFT_CLIENT,
        "SSO_MICROSOFT_CLIENT_SECRET": "microsoft-secret",
        "SSO_MICROSOFT_TENANT": TENANT,
        "SSO_MICROSOFT_AUTHORITY": "https://login.microsoftonline.com",
        "SSO_OIDC_SERVER_URL": OIDC_ISSUER,
        "SSO_OIDC_CLIENT_ID": OIDC_CLIENT,
        "SSO_OIDC_CLIENT_SECRET": "oidc-secret",
        "SSO_OIDC_NAME": "Sign in with your trust account",
        "SSO_OIDC_DOMAINS": [SCHOOL],
        "SSO_FORM_ACTION_ORIGINS": [],
    }
    for name, value in values.items():
        setattr(settings, name, value)
    settings.SOCIALACCOUNT_PROVIDERS = sso_providers(values)
    return values


@dataclass
class Provider:
    """One provider as allauth meets it: where sign-in starts, its callback, its token."""

    login: str
    callback: str
    issuer: str
    client_id: str
    token_url: str


GOOGLE = Provider(
    "/accounts/google/login/",
    "/accounts/google/login/callback/",
    "https://accounts.google.com",
    GOOGLE_CLIENT,
    "https://oauth2.googleapis.com/token",
)
MICROSOFT = Provider(
    "/accounts/oidc/microsoft/login/",
    "/accounts/oidc/microsoft/login/callback/",
    f"{ENTRA}/v2.0",
    MICROSOFT_CLIENT,
    f"{ENTRA}/oauth2/v2.0/token",
)
OIDC = Provider(
    "/accounts/oidc/oidc/login/",
    "/accounts/oidc/oidc/login/callback/",
    OIDC_ISSUER,
    OIDC_CLIENT,
    f"{OIDC_ISSUER}/token",
)


def public_jwks(key) -> dict:
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    return {"keys": [{**jwk, "kid": KEY_ID, "use": "sig", "alg": "RS256"}]}


def record_discovery(mocked, key) -> None:
    """Entra's and the trust's discovery documents and keys, as they publish them."""
    mocked.get(
        f"{ENTRA}/v2.0/.well-known/openid-configuration",
        json={
            "issuer": f"{ENTRA}/v2.0",
            "authorization_endpoint": f"{ENTRA}/oauth2/v2.0/authorize",
            "token_endpoint": MICROSOFT.token_url,
            "jwks_uri": f"{ENTRA}/discovery/v2.0/keys",
            "userinfo_endpoint": "https://graph.microsoft.com/oidc/userinfo",
            "token_endpoint_auth_methods_supported": [
                "client_secret_post",
                "private_key_jwt",
                "client_secret_basic",
            ],
            "id_token_signing_alg_values_supported": ["RS256"],
            "claims_supported": ["sub", "iss", "aud", "exp", "iat", "tid", "email", "amr"],
        },
    )
    mocked.get(f"{ENTRA}/discovery/v2.0/keys", json=public_jwks(key))
    mocked.get(
        f"{OIDC_ISSUER}/.well-known/openid-configuration",
        json={
            "issuer": OIDC_ISSUER,
            "authorization_endpoint": f"{OIDC_ISSUER}/authorize",
            "token_endpoint": OIDC.token_url,
            "userinfo_endpoint": f"{OIDC_ISSUER}/userinfo",
            "jwks_uri": f"{OIDC_ISSUER}/jwks",
            "id_token_signing_alg_values_supported": ["RS256"],
        },
    )
    mocked.get(f"{OIDC_ISSUER}/jwks", json=public_jwks(key))


def id_token(key, provider: Provider, claims: dict) -> str:
    now = int(time.time())
    payload = {
        "iss": provider.issuer,
        "aud": provider.client_id,
        "iat": now,
        "nbf": now,
        "exp": now + 3600,
        **claims,
    }
    return jwt.encode(payload, key, algorithm="RS256", headers={"kid": KEY_ID})


@pytest.fixture
def sign_in(client, signing_key):
    """Sign in through a provider whose ID token holds these claims; return the last answer."""

    def through(provider: Provider, claims: dict, *, userinfo: dict | None = None, process="login"):
        with responses.RequestsMock(assert_all_requests_are_fired=False) as mocked:
            record_discovery(mocked, signing_key)
            start = client.post(provider.login, {"process": process})
            assert start.status_code == 302, start.content
            sent = parse_qs(urlsplit(start["Location"]).query)
            assert sent["client_id"] == [provider.client_id]
            mocked.post(
                provider.token_url,
                json={
                    "token_type": "Bearer",
                    "expires_in": 3599,
                    "access_token": "recorded-access-token",
                    "id_token": id_token(signing_key, provider, claims),
                },
            )
            mocked.get(f"{OIDC_ISSUER}/userinfo", json=userinfo or {"sub": claims["sub"]})
            return client.get(
                provider.callback, {"code": "recorded-code", "state": sent["state"][0]}
            )

    return through


def google(email: str, **claims) -> dict:
    """A Workspace account's ID token claims (as Google sends them)."""
    return {
        "sub": "10769150350006150715113082367",
        "azp": GOOGLE_CLIENT,
        "email": email,
        "email_verified": True,
        "hd": SCHOOL,
        "name": "Sam Staff",
        **claims,
    }


def entra(username: str, **claims) -> dict:
    """A member of the tenant's ID token claims (Entra ID v2.0)."""
    return {
        "sub": "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ",
        "oid": "00000000-0000-0000-66f3-3332eca7ea81",
        "tid": TENANT,
        "preferred_username": username,
        "name": "Sam Staff",
        "ver": "2.0",
        **claims,
    }


def trust(email: str, **claims) -> dict:
    return {"sub": f"trust|{email}", "email": email, "email_verified": True, **claims}


def signed_in_as(client) -> int | None:
    user_id = client.session.get("_auth_user_id")
    return int(user_id) if user_id else None


def refusals() -> list[dict]:
    return [event.detail for event in AuditEvent.objects.filter(action="sso_refused")]


def staff_with_email(username: str, email: str) -> User:
    user = make_staff(username)
    user.email = email
    user.save(update_fields=["email"])
    return user


def pupil_with_email(username: str, email: str, level: str = Level.SECONDARY) -> Learner:
    learner = make_learner(username, f"u-{username}")
    learner.email = email
    learner.level = level
    learner.save(update_fields=["email", "level"])
    return learner


# Google: the Workspace domain is the ID token's `hd`, not the email's domain.


def test_a_workspace_account_of_the_school_signs_in_and_is_linked(client, db, sign_in):
    staff = staff_with_email("sam.staff", "Sam.Staff@school.example")

    response = sign_in(GOOGLE, google("sam.staff@school.example"))

    assert response.status_code == 302
    assert signed_in_as(client) == staff.pk
    linked = SocialAccount.objects.get(provider="google")
    assert linked.user == staff
    assert linked.uid == "10769150350006150715113082367"
    event = AuditEvent.objects.get(action="sso_linked")
    assert event.actor == staff
    assert event.detail == {"provider": "google", "domain": SCHOOL, "kind": "staff"}


@pytest.mark.parametrize(
    "hosted_domain", ["other-school.example", None], ids=["another workspace", "no workspace"]
)
def test_a_google_account_outside_the_schools_workspace_is_refused_whatever_its_email(
    client, db, sign_in, hosted_domain
):
    staff_with_email("sam.staff", "sam.staff@school.example")
    claims = google("sam.staff@school.example", hd=hosted_domain)
    if hosted_domain is None:
        del claims["hd"]  # a personal Google account carrying the school's address

    response = sign_in(GOOGLE, claims)

    assert response.status_code == 403
    assert REFUSED_DOMAIN in response.content.decode()
    assert "add its domain" in response.content.decode()
    assert signed_in_as(client) is None
    assert refusals() == [{"provider": "google", "reason": "domain_not_allowed", "domain": SCHOOL}]
    assert not SocialAccount.objects.exists()


def test_an_audit_row_of_a_refusal_holds_no_token_or_address(client, db, sign_in):
    response = sign_in(GOOGLE, google("nobody@school.example", hd="elsewhere.example"))

    assert response.status_code == 403
    event = AuditEvent.objects.get(action="sso_refused")
    stored = json.dumps(event.detail)
    assert "domain_not_allowed" in stored
    assert "nobody" not in stored
    assert "recorded" not in stored and "eyJ" not in stored


def test_an_unverified_google_email_is_refused(client, db, sign_in):
    staff_with_email("sam.staff", "sam.staff@school.example")

    response = sign_in(GOOGLE, google("sam.staff@school.example", email_verified=False))

    assert response.status_code == 403
    assert NOT_CONFIRMED in response.content.decode()
    assert signed_in_as(client) is None
    assert refusals()[-1]["reason"] == "email_not_verified"


# Microsoft Entra ID: one tenant, `tid`.


def test_a_member_of_the_tenant_signs_in_by_their_user_principal_name(client, db, sign_in):
    staff = staff_with_email("sam.staff", "sam.staff@school.example")

    response = sign_in(MICROSOFT, entra("Sam.Staff@school.example"))

    assert response.status_code == 302
    assert signed_in_as(client) == staff.pk
    assert SocialAccount.objects.get(provider="microsoft").user == staff


def test_an_account_of_another_tenant_is_refused(client, db, sign_in):
    staff_with_email("sam.staff", "sam.staff@school.example")

    response = sign_in(MICROSOFT, entra("sam.staff@school.example", tid=OTHER_TENANT))

    assert response.status_code == 403
    assert REFUSED_DOMAIN in response.content.decode()
    assert signed_in_as(client) is None
    assert refusals() == [
        {"provider": "microsoft", "reason": "domain_not_allowed", "domain": SCHOOL}
    ]


def test_a_guest_in_the_tenant_is_refused_unless_its_email_domain_is_verified(client, db, sign_in):
    staff = staff_with_email("sam.staff", "sam.staff@school.example")
    guest = entra(
        "sam.staff@school.example",
        idp=f"https://sts.windows.net/{OTHER_TENANT}/",
        email="sam.staff@school.example",
    )

    refused = sign_in(MICROSOFT, guest)
    assert refused.status_code == 403
    assert NOT_CONFIRMED in refused.content.decode()
    assert signed_in_as(client) is None

    vouched = sign_in(MICROSOFT, {**guest, "xms_edov": True})
    assert vouched.status_code == 302
    assert signed_in_as(client) == staff.pk


# Which account: exactly one active account has the email.


def test_an_email_no_account_has_is_refused_and_makes_no_account(client, db, sign_in):
    accounts = User.objects.count()

    response = sign_in(OIDC, trust("new.teacher@school.example"))

    assert response.status_code == 403
    assert NO_ACCOUNT in response.content.decode()
    assert User.objects.count() == accounts
    assert not SocialAccount.objects.exists()
    assert refusals() == [{"provider": "oidc", "reason": "no_account", "domain": SCHOOL}]
    # allauth's own page for signing up with a provider's account is not there.
    assert client.get("/accounts/3rdparty/signup/").status_code == 404


def test_an_email_two_accounts_have_is_refused(client, db, sign_in):
    staff_with_email("sam.staff", "sam@school.example")
    pupil_with_email("sam.pupil", "SAM@school.example")

    response = sign_in(OIDC, trust("sam@school.example"))

    assert response.status_code == 403
    assert SEVERAL in response.content.decode()
    assert signed_in_as(client) is None
    assert refusals()[-1]["reason"] == "several_accounts"


def test_a_deactivated_account_is_refused_then_and_once_linked(client, db, sign_in):
    staff = staff_with_email("sam.staff", "sam.staff@school.example")
    staff.is_active = False
    staff.save(update_fields=["is_active"])

    refused = sign_in(OIDC, trust("sam.staff@school.example"))
    assert refused.status_code == 403
    assert NOT_ACTIVE in refused.content.decode()

    staff.is_active = True
    staff.save(update_fields=["is_active"])
    assert sign_in(OIDC, trust("sam.staff@school.example")).status_code == 302
    assert signed_in_as(client) == staff.pk
    client.logout()
    staff.is_active = False
    staff.save(update_fields=["is_active"])

    linked = sign_in(OIDC, trust("sam.staff@school.example"))
    assert linked.status_code == 403
    assert NOT_ACTIVE in linked.content.decode()
    assert signed_in_as(client) is None
    assert [detail["reason"] for detail in refusals()] == ["account_deactivated"] * 2


def test_an_inactive_account_beside_an_active_one_leaves_the_active_one(client, db, sign_in):
    left = staff_with_email("old.staff", "head@school.example")
    left.is_active = False
    left.save(update_fields=["is_active"])
    current = staff_with_email("new.staff", "head@school.example")

    assert sign_in(OIDC, trust("head@school.example")).status_code == 302
    assert signed_in_as(client) == current.pk


def test_two_active_accounts_are_refused_however_many_inactive_ones_share_the_email(
    client, db, sign_in
):
    for number in range(5):
        left = staff_with_email(f"old.staff{number}", "head@school.example")
        left.is_active = False
        left.save(update_fields=["is_active"])
    staff_with_email("new.staff", "head@school.example")
    pupil_with_email("head.pupil", "head@school.example")

    response = sign_in(OIDC, trust("head@school.example"))

    assert response.status_code == 403
    assert SEVERAL in response.content.decode()
    assert signed_in_as(client) is None
    assert not SocialAccount.objects.exists()


def test_only_inactive_accounts_with_the_email_are_refused_as_not_active(client, db, sign_in):
    for number in range(6):
        left = staff_with_email(f"old.staff{number}", "head@school.example")
        left.is_active = False
        left.save(update_fields=["is_active"])

    response = sign_in(OIDC, trust("head@school.example"))

    assert response.status_code == 403
    assert NOT_ACTIVE in response.content.decode()
    assert refusals()[-1]["reason"] == "account_deactivated"


def test_an_unverified_email_at_the_trusts_provider_is_refused(client, db, sign_in):
    staff_with_email("sam.staff", "sam.staff@school.example")

    response = sign_in(OIDC, trust("sam.staff@school.example", email_verified=False))

    assert response.status_code == 403
    assert NOT_CONFIRMED in response.content.decode()


def test_a_trust_account_of_another_domain_is_refused(client, db, sign_in):
    staff_with_email("sam.staff", "sam.staff@elsewhere.example")

    response = sign_in(OIDC, trust("sam.staff@elsewhere.example"))

    assert response.status_code == 403
    assert REFUSED_DOMAIN in response.content.decode()
    assert refusals() == [
        {"provider": "oidc", "reason": "domain_not_allowed", "domain": "elsewhere.example"}
    ]


# Pupils.


@pytest.mark.parametrize("level", [Level.SECONDARY, Level.FURTHER_EDUCATION])
def test_a_secondary_or_college_pupil_signs_in_with_their_school_email(client, db, sign_in, level):
    pupil = pupil_with_email("lee.pupil", "lee.pupil@school.example", level)

    response = sign_in(GOOGLE, google("lee.pupil@school.example"))

    assert response.status_code == 302
    assert signed_in_as(client) == pupil.user.pk
    assert client.get("/").url == "/me/"
    event = AuditEvent.objects.get(action="sso_linked")
    assert event.learner == pupil
    assert event.detail["kind"] == "pupil"


def test_a_primary_pupil_is_refused(client, db, sign_in):
    pupil = pupil_with_email("pip.pupil", "pip@school.example", Level.PRIMARY)

    response = sign_in(GOOGLE, google("pip@school.example"))

    assert response.status_code == 403
    assert PRIMARY in response.content.decode()
    assert signed_in_as(client) is None
    event = AuditEvent.objects.get(action="sso_refused")
    assert event.learner == pupil
    assert event.detail["reason"] == "primary_pupil"


def test_a_pupil_keeps_their_password(client, db, sign_in):
    pupil = pupil_with_email("lee.pupil", "lee.pupil@school.example")
    assert sign_in(GOOGLE, google("lee.pupil@school.example")).status_code == 302
    client.logout()

    response = client.post(
        "/accounts/login/", {"username": "lee.pupil", "password": "correct-horse-battery"}
    )

    assert response.status_code == 302
    assert signed_in_as(client) == pupil.user.pk


def test_a_staff_identity_never_reaches_a_pupil_account_once_its_email_moves(client, db, sign_in):
    staff = staff_with_email("sam.staff", "sam@school.example")
    assert sign_in(OIDC, trust("sam@school.example")).status_code == 302
    client.logout()
    # The address moves from the staff account to a pupil's record.
    staff.email = "sam.staff@school.example"
    staff.save(update_fields=["email"])
    pupil_with_email("sam.pupil", "sam@school.example")

    response = sign_in(OIDC, trust("sam@school.example"))

    assert response.status_code == 403
    assert OTHER_KIND in response.content.decode()
    assert signed_in_as(client) is None
    assert refusals()[-1]["reason"] == "account_kind_changed"


def test_a_pupil_identity_never_reaches_a_staff_account_once_its_email_moves(client, db, sign_in):
    pupil = pupil_with_email("sam.pupil", "sam@school.example")
    assert sign_in(GOOGLE, google("sam@school.example")).status_code == 302
    client.logout()
    pupil.email = ""
    pupil.save(update_fields=["email"])
    staff_with_email("sam.staff", "sam@school.example")

    response = sign_in(GOOGLE, google("sam@school.example"))

    assert response.status_code == 403
    assert OTHER_KIND in response.content.decode()
    assert signed_in_as(client) is None


def test_a_linked_identity_signs_in_again_without_a_second_link(client, db, sign_in):
    staff = staff_with_email("sam.staff", "sam.staff@school.example")
    assert sign_in(MICROSOFT, entra("sam.staff@school.example")).status_code == 302
    client.logout()

    assert sign_in(MICROSOFT, entra("sam.staff@school.example")).status_code == 302

    assert signed_in_as(client) == staff.pk
    assert SocialAccount.objects.filter(user=staff).count() == 1
    assert AuditEvent.objects.filter(action="sso_linked").count() == 1


def test_a_linked_identity_from_another_tenant_is_refused(client, db, sign_in):
    staff_with_email("sam.staff", "sam.staff@school.example")
    assert sign_in(MICROSOFT, entra("sam.staff@school.example")).status_code == 302
    client.logout()

    response = sign_in(MICROSOFT, entra("sam.staff@school.example", tid=OTHER_TENANT))

    assert response.status_code == 403
    assert REFUSED_DOMAIN in response.content.decode()
    assert signed_in_as(client) is None


def test_a_signed_in_person_cannot_link_another_accounts_identity_to_their_own(client, db, sign_in):
    signed_in = staff_with_email("sam.staff", "sam.staff@school.example")
    other = staff_with_email("kim.staff", "kim.staff@school.example")
    client.force_login(signed_in)

    response = sign_in(GOOGLE, google("kim.staff@school.example"), process="connect")

    assert response.status_code == 403
    assert "This school account belongs to another portal account" in response.content.decode()
    assert refusals()[-1]["reason"] == "other_account"
    assert not SocialAccount.objects.filter(user__in=[signed_in, other]).exists()


# The provider's second factor (SSO_TRUST_PROVIDER_MFA).


def give_authenticator_app(user: User) -> None:
    from allauth.mfa.totp.internal.auth import TOTP, generate_totp_secret

    TOTP.activate(user, generate_totp_secret())
    assert Authenticator.objects.filter(user=user, type=Authenticator.Type.TOTP).exists()


def test_by_default_staff_with_a_factor_give_the_portals_code_after_the_provider(
    client, db, sign_in
):
    staff = staff_with_email("sam.staff", "sam.staff@school.example")
    give_authenticator_app(staff)

    response = sign_in(MICROSOFT, entra("sam.staff@school.example", amr=["pwd", "mfa"]))

    assert response.status_code == 302
    assert response["Location"] == "/accounts/2fa/authenticate/"
    assert signed_in_as(client) is None


def test_a_trusted_providers_second_factor_stands_for_the_portals(client, db, sign_in, settings):
    settings.SSO_TRUST_PROVIDER_MFA = True
    staff = staff_with_email("sam.staff", "sam.staff@school.example")
    give_authenticator_app(staff)

    response = sign_in(MICROSOFT, entra("sam.staff@school.example", amr=["pwd", "mfa"]))

    assert response.status_code == 302
    assert response["Location"] == "/"
    assert signed_in_as(client) == staff.pk
    records = client.session["account_authentication_methods"]
    given = [(r["method"], r.get("type"), r.get("provider")) for r in records]
    assert ("mfa", "provider", "microsoft") in given


def test_a_trusted_provider_without_mfa_in_amr_still_asks_for_the_portals_code(
    client, db, sign_in, settings
):
    settings.SSO_TRUST_PROVIDER_MFA = True
    staff = staff_with_email("sam.staff", "sam.staff@school.example")
    give_authenticator_app(staff)

    response = sign_in(MICROSOFT, entra("sam.staff@school.example", amr=["pwd"]))

    assert response["Location"] == "/accounts/2fa/authenticate/"
    assert signed_in_as(client) is None


@pytest.mark.mfa
def test_staff_without_a_factor_whose_provider_gave_one_reach_their_pages(
    client, db, sign_in, settings
):
    settings.SSO_TRUST_PROVIDER_MFA = True
    staff = staff_with_email("sam.staff", "sam.staff@school.example")

    response = sign_in(MICROSOFT, entra("sam.staff@school.example", amr=["mfa"]))

    assert signed_in_as(client) == staff.pk
    assert client.get("/learners/").status_code == 200
    assert response.status_code == 302

    # Step-up: with no factor of their own, they give the provider's again, by its sign-in.
    session = client.session
    for record in session["account_authentication_methods"]:
        record["at"] -= (settings.MFA_STEP_UP_MINUTES + 1) * 60
    session.save()
    step_up = client.get("/safeguarding/")
    assert step_up.status_code == 302
    assert step_up["Location"] == f"{MICROSOFT.login}?next=%2Fsafeguarding%2F"


# A provider that cannot be reached.

UNREACHABLE = "Your school's sign-in service could not be reached."


@pytest.mark.parametrize("provider", [MICROSOFT, OIDC], ids=["microsoft", "oidc"])
def test_a_provider_that_cannot_be_reached_gives_a_page_saying_so(client, db, provider, caplog):
    discovery = f"{provider.issuer}/.well-known/openid-configuration"
    with responses.RequestsMock() as mocked:
        mocked.get(discovery, body=requests.ConnectionError(f"refused: {discovery}?secret"))

        response = client.post(provider.login, {"process": "login"})

    assert response.status_code == 503
    page = response.content.decode()
    assert UNREACHABLE in page
    assert "sign in with your username and password if you have one" in page
    assert signed_in_as(client) is None
    [warning] = [r for r in caplog.records if "sign-in provider" in r.getMessage()]
    assert warning.levelname == "WARNING" and "ConnectionError" in warning.getMessage()
    assert "secret" not in warning.getMessage()


def test_an_unreadable_discovery_document_gives_the_same_page(client, db):
    with responses.RequestsMock() as mocked:
        mocked.get(f"{OIDC_ISSUER}/.well-known/openid-configuration", body="<html>down</html>")

        response = client.post(OIDC.login, {"process": "login"})

    assert response.status_code == 503
    assert UNREACHABLE in response.content.decode()


def test_a_provider_gone_between_the_button_and_the_return_gives_the_page(client, db, signing_key):
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mocked:
        record_discovery(mocked, signing_key)
        start = client.post(OIDC.login, {"process": "login"})
        state = parse_qs(urlsplit(start["Location"]).query)["state"][0]
    with responses.RequestsMock() as mocked:
        mocked.get(
            f"{OIDC_ISSUER}/.well-known/openid-configuration",
            body=requests.ConnectionError("connection reset"),
        )

        response = client.get(OIDC.callback, {"code": "recorded-code", "state": state})

    assert response.status_code == 503
    assert UNREACHABLE in response.content.decode()
    assert signed_in_as(client) is None


# The sign-in page and its policy.


def test_the_sign_in_page_offers_each_configured_provider_as_a_post_form(client, db):
    page = client.get("/accounts/login/").content.decode()

    assert "Staff and older pupils: sign in with your school account" in page
    for action, words in [
        (GOOGLE.login, "Sign in with Google"),
        (MICROSOFT.login, "Sign in with Microsoft"),
        (OIDC.login, "Sign in with your trust account"),
    ]:
        assert f'<form method="post" action="{action}"' in page
        assert words in page
    assert 'name="username"' in page and 'name="password"' in page


def test_the_policy_lets_the_buttons_reach_each_providers_authorization_page(providers):
    assert sso_form_action(providers) == [
        "https://accounts.google.com",
        "https://login.microsoftonline.com",
        OIDC_ISSUER,
    ]


def test_without_providers_the_page_offers_none(client, db, settings):
    settings.SOCIALACCOUNT_PROVIDERS = sso_providers({})

    page = client.get("/accounts/login/").content.decode()

    assert 'name="password"' in page
    assert "school account" not in page


def test_a_provider_with_no_allowed_domain_is_reported_by_the_system_checks(settings):
    assert school_account_domains() == []
    settings.SSO_GOOGLE_DOMAINS = []
    settings.SSO_OIDC_DOMAINS = []

    assert [problem.id for problem in school_account_domains()] == ["signin.W001", "signin.W002"]
    call_command("check")  # warnings only: the portal still starts
