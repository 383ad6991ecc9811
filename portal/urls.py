"""Root URLconf: the stable page paths (docs/architecture.md lists them); each app's own URLs."""

from allauth.account.decorators import secure_admin_login
from django.contrib import admin
from django.urls import include, path

from accounts.school_choice import school_choose
from portal import views
from signin.views import SignInView

# The admin signs in on the portal's own page, so that the second factor follows the password
# there too (Django's admin login would sign a superuser in with the password alone).
admin.site.login = secure_admin_login(admin.site.login)

# While the database does not answer, a 503 page instead of the 500 (portal/middleware.py).
handler400 = views.bad_request
handler500 = views.server_error

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/login/", SignInView.as_view(), name="login"),
    path("accounts/logout/", views.SignOutView.as_view(), name="logout"),
    # The same pages by the names django-allauth's steps lead to.
    path("accounts/login/", SignInView.as_view(), name="account_login"),
    path("accounts/logout/", views.SignOutView.as_view(), name="account_logout"),
    # School identity providers (/accounts/google/..., /accounts/oidc/<id>/...) and the
    # second factor (/accounts/2fa/...): the parts of django-allauth the portal uses.
    path("accounts/", include("signin.urls")),
    path("schools/choose/", school_choose, name="school_choose"),
    path("", include("staff.urls")),
    path("", include("dashboard.urls")),
    path("classes/", include("classes.urls")),
    path("", include("lessons.urls")),
    path("follow-ups/", include("followups.urls")),
    path("roster/", include("roster.urls")),
    path("learners/", include("imports.urls")),
    path("learners/", include("learners.urls")),
    path("", include("privacy.urls")),
    path("", include("safeguarding.urls")),
    path("me/", include("assessments.urls")),
    path("pictures/", include("pictures.urls")),
    path("speech/", include("speech.urls")),
    path("operations/", include("assessments.staff_urls")),
    path("admin/", admin.site.urls),
]
