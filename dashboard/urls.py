from django.urls import path

from dashboard import views

app_name = "dashboard"

# Mounted at the root: the results file kept the address it had when the learners app served it.
urlpatterns = [
    path("dashboard/", views.dashboard, name="home"),
    path("trust/", views.trust, name="trust"),
    path("learners/results.csv", views.results_csv, name="results_csv"),
]
