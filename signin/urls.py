"""The parts of django-allauth the portal uses, under /accounts/ (the rest it does without).

Accounts are made by staff, never by signing up; passwords and email addresses are changed on
the staff pages. So only these: the school identity providers' sign-in and return, a provider
sign-in cancelled or failed, the second factor's pages, and the two account pages allauth's
steps lead to. allauth names the sign-in and sign-out pages `account_login` and
`account_logout`: those names lead to the portal's own pages (portal/urls.py).
"""

from allauth.account import views as account_views
from allauth.mfa.webauthn import urls as webauthn_urls
from allauth.mfa.webauthn import views as webauthn_views
from allauth.socialaccount import app_settings as socialaccount_settings
from allauth.socialaccount import views as socialaccount_views
from allauth.socialaccount.providers.google import views as google_views
from allauth.socialaccount.providers.openid_connect import views as openid_connect_views
from django.urls import include, path

from signin.views import RemovePasskeyView, provider_reachable

# allauth's second-factor pages, but for the removal of a passkey: allauth's never asks the
# MFA adapter, and staff keep their last factor (signin.views.RemovePasskeyView).
PASSKEY_PAGES = [
    *[
        pattern
        for pattern in webauthn_urls.urlpatterns
        if getattr(pattern, "name", None) != "mfa_remove_webauthn"
        and not str(pattern.pattern).startswith("keys/")
    ],
    path("keys/<int:pk>/remove/", RemovePasskeyView.as_view(), name="mfa_remove_webauthn"),
    path("keys/<int:pk>/edit/", webauthn_views.edit_webauthn, name="mfa_edit_webauthn"),
]
SECOND_FACTOR_PAGES = [
    path("", include("allauth.mfa.base.urls")),
    path("totp/", include("allauth.mfa.totp.urls")),
    path("recovery-codes/", include("allauth.mfa.recovery_codes.urls")),
    path("webauthn/", include(PASSKEY_PAGES)),
]

# The providers' sign-in and return: allauth's views, names and paths (as its own url modules
# give them), each answering with a page when the provider cannot be reached. Google's One Tap
# token page is not there: the portal does not offer it.
PROVIDER_PAGES = [
    path(
        "google/",
        include(
            [
                path("login/", provider_reachable(google_views.oauth2_login), name="google_login"),
                path(
                    "login/callback/",
                    provider_reachable(google_views.oauth2_callback),
                    name="google_callback",
                ),
            ]
        ),
    ),
    path(
        f"{socialaccount_settings.OPENID_CONNECT_URL_PREFIX}/<str:provider_id>/",
        include(
            [
                path(
                    "login/",
                    provider_reachable(openid_connect_views.login),
                    name="openid_connect_login",
                ),
                path(
                    "login/callback/",
                    provider_reachable(openid_connect_views.callback),
                    name="openid_connect_callback",
                ),
            ]
        ),
    ),
]

urlpatterns = [
    path("inactive/", account_views.account_inactive, name="account_inactive"),
    path("reauthenticate/", account_views.reauthenticate, name="account_reauthenticate"),
    path(
        "3rdparty/login/cancelled/",
        socialaccount_views.login_cancelled,
        name="socialaccount_login_cancelled",
    ),
    path(
        "3rdparty/login/error/",
        socialaccount_views.login_error,
        name="socialaccount_login_error",
    ),
    path("2fa/", include(SECOND_FACTOR_PAGES)),
    path("", include(PROVIDER_PAGES)),
]
