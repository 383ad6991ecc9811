from django.urls import path

from followups import views

app_name = "followups"

urlpatterns = [
    path("", views.followup_index, name="queue"),
    path("<int:pk>/", views.followup_item, name="detail"),
]
