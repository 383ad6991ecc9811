from django.urls import path

from followups import views

app_name = "followups"

urlpatterns = [
    path("", views.followup_queue, name="queue"),
]
