from django.urls import path

from safeguarding import views

app_name = "safeguarding"

urlpatterns = [
    path("safeguarding/", views.alert_list, name="alerts"),
    path("safeguarding/alerts/<int:pk>/", views.alert_detail, name="alert"),
    path(
        "safeguarding/alerts/<int:pk>/acknowledge/",
        views.alert_acknowledge_view,
        name="acknowledge",
    ),
    path("me/talk/", views.talk, name="talk"),
]
