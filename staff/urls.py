from django.urls import path

from staff import lock_views, views

app_name = "staff"

urlpatterns = [
    path("staff/", views.staff_list, name="staff_list"),
    path("staff/new/", views.staff_new, name="staff_new"),
    path("staff/<int:pk>/", views.staff_edit, name="staff_edit"),
    path("settings/", views.partner_settings, name="settings"),
    path("sign-in-locks/", lock_views.sign_in_locks, name="sign_in_locks"),
    path("sign-in-locks/<int:pk>/lift/", lock_views.sign_in_lock_lift, name="sign_in_lock_lift"),
]
