"""django-allauth's provider settings, and the CSP sources they need, from the SSO_* values.

portal/settings.py builds SOCIALACCOUNT_PROVIDERS and the CSP's form-action with these at start;
tests that configure a provider call them again (settings are computed once, at import). Plain
functions of the values: nothing here touches Django, so the settings module can import it.
"""

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

# Google's authorization endpoint (allauth's default AUTHORIZE_URL for the google provider).
GOOGLE_AUTHORIZATION_ORIGIN = "https://accounts.google.com"

# What each provider is called in allauth: its id in SOCIALACCOUNT_PROVIDERS or provider_id.
GOOGLE = "google"
MICROSOFT = "microsoft"
OIDC = "oidc"


def google_configured(sso: Mapping[str, Any]) -> bool:
    """Return whether Google Workspace sign-in is configured."""
    return bool(sso.get("SSO_GOOGLE_CLIENT_ID") and sso.get("SSO_GOOGLE_CLIENT_SECRET"))


def microsoft_configured(sso: Mapping[str, Any]) -> bool:
    """Return whether Microsoft Entra ID sign-in is configured (one tenant)."""
    return bool(
        sso.get("SSO_MICROSOFT_CLIENT_ID")
        and sso.get("SSO_MICROSOFT_CLIENT_SECRET")
        and sso.get("SSO_MICROSOFT_TENANT")
    )


def oidc_configured(sso: Mapping[str, Any]) -> bool:
    """Return whether a trust's or local authority's OpenID Connect provider is configured."""
    return bool(
        sso.get("SSO_OIDC_SERVER_URL")
        and sso.get("SSO_OIDC_CLIENT_ID")
        and sso.get("SSO_OIDC_CLIENT_SECRET")
    )


def microsoft_issuer(sso: Mapping[str, Any]) -> str:
    """Return the tenant's own issuer: its discovery names only that tenant's tokens."""
    authority = str(sso.get("SSO_MICROSOFT_AUTHORITY") or "https://login.microsoftonline.com")
    return f"{authority.rstrip('/')}/{sso['SSO_MICROSOFT_TENANT']}/v2.0"


def sso_providers(sso: Mapping[str, Any]) -> dict:
    """Return SOCIALACCOUNT_PROVIDERS for the providers whose client id and secret are set."""
    providers: dict = {}
    if google_configured(sso):
        domains = list(sso.get("SSO_GOOGLE_DOMAINS") or [])
        providers[GOOGLE] = {
            "APPS": [
                {
                    "client_id": sso["SSO_GOOGLE_CLIENT_ID"],
                    "secret": sso["SSO_GOOGLE_CLIENT_SECRET"],
                }
            ],
            "SCOPE": ["openid", "email", "profile"],
            # Google shows its account chooser limited to the school's domain (a hint only: the
            # `hd` claim is what is checked).
            "AUTH_PARAMS": {"hd": domains[0]} if len(domains) == 1 else {},
        }
    apps = []
    if microsoft_configured(sso):
        # Entra ID through allauth's OpenID Connect provider: its ID token (tid, amr) is kept.
        apps.append(
            {
                "provider_id": MICROSOFT,
                "name": "Microsoft",
                "client_id": sso["SSO_MICROSOFT_CLIENT_ID"],
                "secret": sso["SSO_MICROSOFT_CLIENT_SECRET"],
                "settings": {"server_url": microsoft_issuer(sso), "fetch_userinfo": False},
            }
        )
    if oidc_configured(sso):
        apps.append(
            {
                "provider_id": OIDC,
                "name": sso.get("SSO_OIDC_NAME") or "Sign in with your trust account",
                "client_id": sso["SSO_OIDC_CLIENT_ID"],
                "secret": sso["SSO_OIDC_CLIENT_SECRET"],
                "settings": {"server_url": sso["SSO_OIDC_SERVER_URL"]},
            }
        )
    if apps:
        providers["openid_connect"] = {"APPS": apps, "SCOPE": ["openid", "email", "profile"]}
    return providers


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def sso_form_action(sso: Mapping[str, Any]) -> list[str]:
    """Return the origins the sign-in buttons' POSTs redirect to, for the CSP's form-action.

    Chromium applies form-action to every redirect after a form is sent: the button POSTs to
    the portal, which redirects to the provider's authorization endpoint. A provider that
    redirects on again (Google to a school's own SAML provider) needs that origin too:
    SSO_FORM_ACTION_ORIGINS.
    """
    origins = []
    if google_configured(sso):
        origins.append(GOOGLE_AUTHORIZATION_ORIGIN)
    if microsoft_configured(sso):
        origins.append(_origin(microsoft_issuer(sso)))
    if oidc_configured(sso):
        origins.append(_origin(sso["SSO_OIDC_SERVER_URL"]))
    origins.extend(_origin(url) for url in sso.get("SSO_FORM_ACTION_ORIGINS") or [])
    return list(dict.fromkeys(origins))
