"""System checks: a provider configured so that nobody could ever sign in with it."""

from django.conf import settings
from django.core.checks import Warning, register

from signin.configuration import google_configured, microsoft_configured, oidc_configured


def _sso_values() -> dict:
    return {name: getattr(settings, name) for name in dir(settings) if name.startswith("SSO_")}


@register()
def school_account_domains(app_configs=None, **kwargs) -> list[Warning]:
    """Warn when a provider has a button but no domain or tenant its accounts may come from."""
    sso = _sso_values()
    problems = []
    if google_configured(sso) and not sso.get("SSO_GOOGLE_DOMAINS"):
        problems.append(
            Warning(
                "Google sign-in is configured without SSO_GOOGLE_DOMAINS: every account "
                "will be refused.",
                hint="Set SSO_GOOGLE_DOMAINS to the school's Workspace domain(s).",
                id="signin.W001",
            )
        )
    if oidc_configured(sso) and not sso.get("SSO_OIDC_DOMAINS"):
        problems.append(
            Warning(
                "The OpenID Connect provider is configured without SSO_OIDC_DOMAINS: every "
                "account will be refused.",
                hint="Set SSO_OIDC_DOMAINS to the email domains its accounts may have.",
                id="signin.W002",
            )
        )
    partly_microsoft = sso.get("SSO_MICROSOFT_CLIENT_ID") and not microsoft_configured(sso)
    if partly_microsoft:
        problems.append(
            Warning(
                "Microsoft sign-in needs SSO_MICROSOFT_CLIENT_SECRET and SSO_MICROSOFT_TENANT "
                "as well as its client id: no button is shown.",
                id="signin.W003",
            )
        )
    return problems
