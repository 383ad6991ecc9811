from django.urls import path

from learners import group_views

app_name = "classes"

# Mounted at /classes/: "classes" is what schools call them; the model says groups.
urlpatterns = [
    path("", group_views.group_list, name="list"),
    path("new/", group_views.group_new, name="new"),
    path("<int:pk>/", group_views.group_detail, name="detail"),
    path("<int:pk>/edit/", group_views.group_edit, name="edit"),
    path("<int:pk>/learners/", group_views.group_add_learners, name="add_learners"),
    path(
        "<int:pk>/learners/<int:learner_pk>/remove/",
        group_views.group_remove_learner,
        name="remove_learner",
    ),
]
