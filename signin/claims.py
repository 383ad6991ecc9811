"""What a provider's answer says about a school identity: its email, whether the provider vouches
for it, and whether it comes from the school's own domain or tenant.

Each provider has its own words for these:

- Google (allauth's `google` provider; extra_data holds the ID token's claims): `email_verified`,
  and the Workspace in `hd`, which must be one of SSO_GOOGLE_DOMAINS. The email's own domain is
  not enough: a personal Google account can carry any address that was once verified.
- Microsoft Entra ID (`openid_connect`, provider_id `microsoft`; extra_data["id_token"]): the
  tenant in `tid` must be SSO_MICROSOFT_TENANT. Entra has no `email_verified`, and its `email`
  claim is whatever the directory holds. Two things count as verified: `email` when the
  optional claim `xms_edov` (the email's domain is verified by its owner) is true, and otherwise
  `preferred_username`, the user principal name, for a member of the tenant (no `idp` claim
  naming another directory): a UPN's domain must be one the tenant has verified. A guest
  account's `preferred_username` is its address in its home directory, never checked by ours.
- Any other OpenID Connect provider (`openid_connect`, provider_id `oidc`; extra_data["id_token"]
  and ["userinfo"]): `email_verified`, and the email's domain in SSO_OIDC_DOMAINS.
"""

from dataclasses import dataclass

from django.conf import settings

from signin.configuration import GOOGLE, MICROSOFT, OIDC

# The `amr` value that says the provider asked for a second factor (RFC 8176).
MFA_AMR = "mfa"


@dataclass(frozen=True)
class SchoolIdentity:
    """A provider's account as the portal judges it (no token, only what it needs)."""

    provider: str
    email: str
    email_verified: bool
    domain_allowed: bool
    # How the provider says the person signed in (the ID token's `amr`), e.g. ("pwd", "mfa").
    methods: tuple[str, ...] = ()

    @property
    def email_domain(self) -> str:
        """Return the email's domain, lower case ('' without an email)."""
        return self.email.rpartition("@")[2].lower() if "@" in self.email else ""

    @property
    def provider_gave_second_factor(self) -> bool:
        """Return whether the ID token says the provider asked for a second factor."""
        return MFA_AMR in self.methods


def _true(value: object) -> bool:
    """Return whether a claim is true (some providers send "true" as a string)."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def _methods(claims: dict) -> tuple[str, ...]:
    amr = claims.get("amr")
    if isinstance(amr, str):
        amr = [amr]
    if not isinstance(amr, list):
        return ()
    return tuple(str(method) for method in amr)


def _email(claims: dict) -> str:
    email = claims.get("email")
    return email.strip() if isinstance(email, str) else ""


def _google(claims: dict) -> SchoolIdentity:
    hosted_domain = str(claims.get("hd") or "").lower()
    return SchoolIdentity(
        provider=GOOGLE,
        email=_email(claims),
        email_verified=_true(claims.get("email_verified", claims.get("verified_email"))),
        domain_allowed=bool(hosted_domain) and hosted_domain in settings.SSO_GOOGLE_DOMAINS,
        methods=_methods(claims),
    )


def _entra_email(claims: dict, tenant: str) -> tuple[str, bool]:
    """Return the email Entra vouches for, or the one it names and False."""
    email = _email(claims)
    if email and _true(claims.get("xms_edov")):
        return email, True
    username = claims.get("preferred_username")
    username = username.strip() if isinstance(username, str) else ""
    home_directory = str(claims.get("idp") or "").lower()
    member = not home_directory or tenant in home_directory
    if "@" in username and member:
        return username, True
    return email or username, False


def _microsoft(id_token: dict) -> SchoolIdentity:
    tenant = settings.SSO_MICROSOFT_TENANT.strip().lower()
    email, verified = _entra_email(id_token, tenant)
    token_tenant = str(id_token.get("tid") or "").lower()
    return SchoolIdentity(
        provider=MICROSOFT,
        email=email,
        email_verified=verified,
        domain_allowed=bool(tenant) and token_tenant == tenant,
        methods=_methods(id_token),
    )


def _oidc(id_token: dict, userinfo: dict) -> SchoolIdentity:
    # userinfo, when fetched, is the fuller answer (allauth prefers it too).
    claims = {**id_token, **userinfo}
    email = _email(claims)
    domain = email.rpartition("@")[2].lower() if "@" in email else ""
    return SchoolIdentity(
        provider=OIDC,
        email=email,
        email_verified=_true(claims.get("email_verified")),
        domain_allowed=bool(domain) and domain in settings.SSO_OIDC_DOMAINS,
        methods=_methods(id_token),
    )


def school_identity(provider_id: str, extra_data: dict) -> SchoolIdentity:
    """Return what the provider's answer (allauth's extra_data) says about the identity."""
    if provider_id == GOOGLE:
        return _google(extra_data)
    id_token = extra_data.get("id_token") or {}
    if provider_id == MICROSOFT:
        return _microsoft(id_token)
    if provider_id == OIDC:
        return _oidc(id_token, extra_data.get("userinfo") or {})
    # A provider the portal did not configure (an app added in the admin): never allowed.
    return SchoolIdentity(
        provider=provider_id, email="", email_verified=False, domain_allowed=False
    )
