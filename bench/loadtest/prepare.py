"""Before the clock starts: the database, the shared cache, and the people of the run.

The database (`portal_loadtest`) is recreated for every run from a template
(`loadtest_template`) that is migrated first, so each run starts empty and the migrations
are applied once, not per run. Learners are registered with this run's sandbox (through the
portal's client, so each has an upstream user id) and get local accounts that share one
password, hashed once: hashing 300 passwords would take minutes of CPU before the run.
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from urllib.parse import urlsplit

from bench.loadtest.cluster import ROOT

TEMPLATE = "loadtest_template"
PASSWORD = "load-test-pass-7431"  # a run's own accounts on a throwaway database
STAFF_USERNAME = "load.dsl"
STAFF_EMAIL = "load.dsl@school.example"
REGISTER_THREADS = 8


@dataclass(frozen=True)
class People:
    """The usernames of the run's learners and staff, and the one password they share."""

    learners: list[str]
    staff: list[str]
    password: str = PASSWORD


def recreate_database(database_url: str, env: dict[str, str]) -> None:
    """Migrate the template database, then make the run's database a fresh copy of it."""
    import psycopg

    parts = urlsplit(database_url)
    name = parts.path.lstrip("/")
    admin = parts._replace(path="/postgres", query="").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        if not connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [TEMPLATE]
        ).fetchone():
            connection.execute(f'CREATE DATABASE "{TEMPLATE}"')
    template_url = parts._replace(path=f"/{TEMPLATE}", query="").geturl()
    subprocess.run(  # noqa: S603 (our own command line)
        [sys.executable, "manage.py", "migrate", "--noinput", "--verbosity=0"],
        cwd=ROOT,
        env={**env, "DATABASE_URL": template_url},
        check=True,
    )
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}"')


def create_people(learners: int, staff: int) -> People:
    """Create the safeguarding lead (staff) and the learners, registered upstream; return them."""
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import Group, User

    from accounts.access import STAFF_GROUP
    from accounts.models import StaffRole
    from accounts.services import staff_role_set
    from learners.models import Learner, Level

    encoded = make_password(PASSWORD)
    staff_group = Group.objects.get_or_create(name=STAFF_GROUP)[0]
    staff_names = [STAFF_USERNAME] + [f"load.staff.{n:02d}" for n in range(2, staff + 1)]
    for username in staff_names:
        # A DSL with an email address: assessments do not start without one (safeguarding).
        user = User.objects.create(username=username, password=encoded, email=STAFF_EMAIL)
        user.groups.add(staff_group)
        staff_role_set(user=user, role=StaffRole.DSL)

    usernames = [f"load.learner.{n:04d}" for n in range(1, learners + 1)]
    with ThreadPoolExecutor(REGISTER_THREADS) as pool:
        upstream_ids = list(pool.map(_register_upstream, usernames))
    users = User.objects.bulk_create(User(username=u, password=encoded) for u in usernames)
    Learner.objects.bulk_create(
        Learner(
            user=user,
            username=user.username,
            first_name="Load",
            last_name=f"Learner {index:04d}",
            dob=date(2010, 5, 17),
            level=Level.SECONDARY,
            upstream_user_id=upstream_id,
            status=Learner.Status.ACTIVE,
        )
        for index, (user, upstream_id) in enumerate(zip(users, upstream_ids, strict=True), 1)
    )
    return People(usernames, staff_names)


def _register_upstream(username: str) -> str:
    """Register one learner with the sandbox and return its upstream user id."""
    from partner_api import get_client

    created = get_client().create_learner(
        username=username, password=PASSWORD, dob=date(2010, 5, 17)
    )
    return created.user_id


def clear_cache() -> None:
    """Empty this run's cache database (its own Redis db): no counts from an earlier run."""
    from django.core.cache import cache

    cache.clear()
