"""Root URLconf: the stable page paths (docs/architecture.md lists them); each app's own URLs."""

from django.contrib import admin
from django.urls import include, path, re_path

from accounts.school_choice import school_choose
from portal import views
from signin.views import RemovePasskeyView, SignInView

# While the database does not answer, a 503 page instead of the 500 (portal/middleware.py).
handler500 = views.server_error

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/login/", SignInView.as_view(), name="login"),
    path("accounts/logout/", views.SignOutView.as_view(), name="logout"),
    # django-allauth's pages the portal does without: accounts are made by staff, passwords
    # and email addresses are changed by staff (the staff pages), never by these.
    re_path(
        r"^accounts/(signup|email|password|confirm-email|login/code|3rdparty/signup)(/|$)",
        views.not_found,
    ),
    # allauth removes a passkey without asking its MFA adapter; staff keep their last factor.
    # It answers allauth's own address, so {% url 'mfa_remove_webauthn' %} leads here (no name
    # of its own: one name, one page).
    path("accounts/2fa/webauthn/keys/<int:pk>/remove/", RemovePasskeyView.as_view()),
    # The rest of django-allauth: school identity providers (/accounts/google/...,
    # /accounts/oidc/<id>/...) and the second factor (/accounts/2fa/...).
    path("accounts/", include("allauth.urls")),
    path("schools/choose/", school_choose, name="school_choose"),
    path("", include("staff.urls")),
    path("", include("dashboard.urls")),
    path("classes/", include("classes.urls")),
    path("", include("lessons.urls")),
    path("follow-ups/", include("followups.urls")),
    path("learners/", include("imports.urls")),
    path("learners/", include("learners.urls")),
    path("", include("privacy.urls")),
    path("", include("safeguarding.urls")),
    path("me/", include("assessments.urls")),
    path("operations/", include("assessments.staff_urls")),
    path("admin/", admin.site.urls),
]
