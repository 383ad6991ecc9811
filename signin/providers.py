"""The school identity providers the environment configured, as the sign-in page offers them."""

from dataclasses import dataclass

from django.conf import settings
from django.urls import reverse
from django.utils.translation import gettext as _


@dataclass(frozen=True)
class Provider:
    """One provider's button: allauth's id for it, its words, and where it starts."""

    id: str
    label: str
    url: str


def offered_providers() -> list[Provider]:
    """Return the providers whose client id and secret are set (SOCIALACCOUNT_PROVIDERS)."""
    configured = settings.SOCIALACCOUNT_PROVIDERS
    offered = []
    if "google" in configured:
        offered.append(Provider("google", _("Sign in with Google"), reverse("google_login")))
    for app in configured.get("openid_connect", {}).get("APPS", []):
        provider_id = app["provider_id"]
        label = _("Sign in with Microsoft") if provider_id == "microsoft" else app["name"]
        offered.append(
            Provider(
                provider_id,
                label,
                reverse("openid_connect_login", kwargs={"provider_id": provider_id}),
            )
        )
    return offered
