"""The answer pictures the portal serves from its own origin."""

from django.urls import path

from pictures import views

app_name = "pictures"

urlpatterns = [
    path("<str:digest>", views.picture, name="picture"),
]
