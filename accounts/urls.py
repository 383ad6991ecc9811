from django.urls import path

from accounts import staff_views, views

app_name = "accounts"

urlpatterns = [
    path("staff/", staff_views.staff_list, name="staff_list"),
    path("staff/new/", staff_views.staff_new, name="staff_new"),
    path("staff/<int:pk>/", staff_views.staff_edit, name="staff_edit"),
    path("settings/", staff_views.partner_settings, name="settings"),
    path("sign-in-locks/", views.sign_in_locks, name="sign_in_locks"),
    path("sign-in-locks/<int:pk>/lift/", views.sign_in_lock_lift, name="sign_in_lock_lift"),
]
