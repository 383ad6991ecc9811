"""Staff pages on the large cohort: learner list (page 1 and a search) and the dashboard.

Requests go through Django's test client in this process (the full middleware stack and
templates, no HTTP server), signed in as a staff member, after a few warm-up requests.
"""

import time

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import Group
from django.test import Client

from bench.support import percentile

TARGET_P95_MS = 150.0
WARM_UP = 5
STAFF_USERNAME = "bench.staff"


def staff_user() -> AbstractBaseUser:
    """Return the bench's staff member, created if missing."""
    from accounts.access import STAFF_GROUP
    from accounts.models import StaffRole
    from accounts.services import staff_role_set

    user, _ = get_user_model().objects.get_or_create(username=STAFF_USERNAME)
    user.groups.add(Group.objects.get_or_create(name=STAFF_GROUP)[0])
    # A safeguarding lead sees every learner and result: the lists at their longest.
    staff_role_set(user=user, role=StaffRole.DSL)
    return user


def staff_client() -> Client:
    """Return a test client signed in as the bench's staff member."""
    client = Client()
    client.force_login(staff_user())
    return client


def search_term() -> str:
    """Return the last name of the first generated learner (one many learners share)."""
    from learners.models import Learner

    try:
        from demo.generator import generated_learners

        learners = generated_learners()
    except ImportError:
        learners = Learner.objects.all()
    learner = learners.exclude(last_name="").order_by("pk").first()
    return learner.last_name if learner else "Smith"


def timings(client: Client, url: str, data: dict, requests: int) -> list[float]:
    """Return the milliseconds of each of `requests` GETs (after a warm-up)."""
    for _ in range(WARM_UP):
        response = client.get(url, data)
        if response.status_code != 200:
            raise RuntimeError(f"{url} {data} answered {response.status_code}")
    spent = []
    for _ in range(requests):
        started = time.perf_counter()
        response = client.get(url, data)
        spent.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise RuntimeError(f"{url} {data} answered {response.status_code}")
    return spent


def rows(*, requests: int) -> list[tuple[str, str, str, str]]:
    """Measure the staff pages and return the table rows."""
    client = staff_client()
    term = search_term()
    measures = [
        ("learner list /learners/ page 1", "/learners/", {}),
        (f"learner list search ?q={term}", "/learners/", {"q": term}),
        ("dashboard /dashboard/", "/dashboard/", {}),
    ]
    table = []
    for label, url, data in measures:
        spent = timings(client, url, data, requests)
        p50, p95 = percentile(spent, 0.5), percentile(spent, 0.95)
        table.append(
            (
                f"{label}: p50 / p95 ({requests} requests)",
                f"{p50:.1f} / {p95:.1f} ms",
                f"p95 < {TARGET_P95_MS:g} ms",
                "PASS" if p95 < TARGET_P95_MS else "FAIL",
            )
        )
    return table
