from django.urls import path

from classes import views

app_name = "classes"

# Mounted at /classes/: "classes" is what schools call them; the model says groups.
urlpatterns = [
    path("", views.group_list, name="list"),
    path("new/", views.group_new, name="new"),
    path("<int:pk>/", views.group_detail, name="detail"),
    path("<int:pk>/edit/", views.group_edit, name="edit"),
    path("<int:pk>/learners/", views.group_add_learners, name="add_learners"),
    path(
        "<int:pk>/learners/<int:learner_pk>/remove/",
        views.group_remove_learner,
        name="remove_learner",
    ),
]
