"""The read-aloud audio the portal serves from its own origin."""

from django.urls import path

from speech import views

app_name = "speech"

urlpatterns = [
    path("<str:digest>", views.recording, name="recording"),
]
