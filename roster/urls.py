from django.urls import path

from roster import views

app_name = "roster"

# Mounted under /roster/: the admins' page of the school's records.
urlpatterns = [
    path("", views.roster_index, name="index"),
    path("grades/", views.roster_grades, name="grades"),
    path("<int:pk>/", views.roster_sync, name="sync"),
    path("<int:pk>/approve/", views.roster_approve, name="approve"),
    path("<int:pk>/discard/", views.roster_discard, name="discard"),
    path("<int:pk>/result.csv", views.roster_result, name="result"),
    path("<int:pk>/slips/", views.roster_slips, name="slips"),
]
