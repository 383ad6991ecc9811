"""`make backup` and `make restore`: a PostgreSQL dump restored elsewhere serves the same records.

PostgreSQL only (CI runs the suite on PostgreSQL too). The records are committed
(transactional_db) so that pg_dump, another process, sees them.
"""

import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from psycopg import sql

from audit.models import AuditEvent
from audit.services import audit_record
from tests.factories import complete_attempt, make_attempt, make_learner, make_staff
from tests.serving import portal_served, production_environment
from tests.workers import database_url_for_workers

pytestmark = pytest.mark.django_db(transaction=True)

STAFF_PASSWORD = "Restored-Harbour-Lamp-42"
CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@pytest.fixture(autouse=True)
def postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("make backup and make restore work with PostgreSQL only")


def manage(*args: str, database_url: str) -> subprocess.CompletedProcess:
    """Run a management command as `make backup` / `make restore` do."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=settings.BASE_DIR,
        env={**production_environment(database_url, Path("unused")), "DEBUG": "true"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def every_row(database_url: str) -> dict[str, list[tuple]]:
    """Return every table's rows, in order, read through a connection of its own."""
    with psycopg.connect(database_url) as db:
        tables = [
            name
            for (name,) in db.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' ORDER BY table_name"
            )
        ]
        return {
            table: db.execute(
                sql.SQL("SELECT * FROM {} ORDER BY 1").format(sql.Identifier(table))
            ).fetchall()
            for table in tables
        }


@pytest.fixture
def restored_database_url():
    """The URL of a database that does not exist yet, dropped at the end."""
    source = database_url_for_workers()
    name = f"serve_restore_{Path(urlsplit(source).path).name}"[:63]
    admin = urlsplit(source)._replace(path="/postgres").geturl()
    drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(drop)
    yield urlsplit(source)._replace(path=f"/{name}").geturl()
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(drop)


def cohort(settings) -> tuple:
    """Learners with attempts, results and audit rows; a DSL who can sign in for real."""
    settings.PASSWORD_HASHERS = ["accounts.hashers.PortalArgon2PasswordHasher"]
    dsl = make_staff("bea.backup", STAFF_PASSWORD)
    learners = [make_learner(f"pupil.{n}", f"u-restore-{n}") for n in ("ada", "bo", "cy")]
    results = [
        complete_attempt(learners[0], {"SLEEP": "yes", "FOCUS": "no"}, risk_level="HIGH"),
        complete_attempt(learners[1], {"STRESS": "no"}, risk_level="LOW"),
    ]
    make_attempt(learners[2])  # part-way through
    for learner in learners:
        audit_record(
            actor=dsl,
            address="203.0.113.9",
            action=AuditEvent.Action.LEARNER_REGISTERED,
            learner=learner,
        )
    return dsl, learners, results


def test_a_backup_restored_into_a_new_database_serves_the_same_records(
    settings, tmp_path, restored_database_url
):
    dsl, learners, results = cohort(settings)
    source_url = database_url_for_workers()

    backup = manage("backup", "--dir", str(tmp_path / "backups"), database_url=source_url)
    assert backup.returncode == 0, backup.stderr
    written = Path(re.search(r"Backup written to (\S+\.dump)", backup.stdout).group(1))
    assert written.parent == tmp_path / "backups" and written.stat().st_size > 0
    assert oct(written.stat().st_mode & 0o777) == oct(0o600)  # personal data: owner only

    restore = manage("restore", str(written), database_url=restored_database_url)
    assert restore.returncode == 0, restore.stderr
    assert every_row(restored_database_url) == every_row(source_url)

    # The portal, started on the restored database, shows the same people and results.
    env = production_environment(restored_database_url, tmp_path / "static")
    with portal_served(env, tmp_path, "--no-workers", "--no-sweeps") as portal:
        portal.wait_until_serving()
        token = CSRF_FIELD.search(portal.get("/accounts/login/").text()).group(1)
        signed_in = portal.request(
            "POST",
            "/accounts/login/",
            form={
                "username": "bea.backup",
                "password": STAFF_PASSWORD,
                "csrfmiddlewaretoken": token,
            },
        )
        assert signed_in.status == 302, portal.output()

        listing = portal.get("/learners/").text()
        for learner in learners:
            assert learner.username in listing
        for result in results:
            attempt = result.attempt
            page = portal.get(f"/learners/{attempt.learner_id}/attempts/{attempt.assessment_id}/")
            assert page.status == 200, portal.output()
            assert str(result.loa_score) in page.text()
            for area in result.focus_areas.all():
                assert area.name in page.text()

    # Reading results there was audited: the restored database takes new rows after the old.
    after = every_row(restored_database_url)["audit_auditevent"]
    before = every_row(source_url)["audit_auditevent"]
    assert after[: len(before)] == before and len(after) > len(before)


def test_restore_refuses_a_database_that_has_tables(tmp_path):
    source_url = database_url_for_workers()
    backup = manage("backup", "--dir", str(tmp_path), database_url=source_url)
    assert backup.returncode == 0, backup.stderr
    written = next(tmp_path.glob("*.dump"))
    before = every_row(source_url)

    refused = manage("restore", str(written), database_url=source_url)

    assert refused.returncode != 0
    assert "only into an empty database" in refused.stderr
    assert every_row(source_url) == before
