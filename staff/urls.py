from django.urls import path

from staff import lock_views, sign_in_views, views

app_name = "staff"

urlpatterns = [
    path("staff/", views.staff_list, name="staff_list"),
    path("staff/new/", views.staff_new, name="staff_new"),
    path("staff/<int:pk>/", views.staff_edit, name="staff_edit"),
    # How a member of staff signs in: each a page that asks to confirm (staff.sign_in_views).
    path(
        "staff/<int:pk>/school-account/unlink/",
        sign_in_views.staff_identity_unlink,
        name="staff_identity_unlink",
    ),
    path(
        "staff/<int:pk>/second-factor/reset/",
        sign_in_views.staff_second_factor_reset,
        name="staff_second_factor_reset",
    ),
    path(
        "staff/<int:pk>/sessions/end/", sign_in_views.staff_sessions_end, name="staff_sessions_end"
    ),
    path("sign-out-everywhere/", sign_in_views.sign_out_everywhere, name="sign_out_everywhere"),
    path("settings/", views.partner_settings, name="settings"),
    path("sign-in-locks/", lock_views.sign_in_locks, name="sign_in_locks"),
    path("sign-in-locks/<int:pk>/lift/", lock_views.sign_in_lock_lift, name="sign_in_lock_lift"),
]
