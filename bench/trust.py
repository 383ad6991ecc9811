"""A trust of 50 schools and 100,000 learners: one school's staff pages and the trust dashboard.

It runs in a process of its own on a database of its own (BENCH_TRUST_DATABASE_URL), so that
the other parts keep measuring a deployment of one school, as today's partners run it;
`python -m bench.run --only trust` starts it (`rows`) with the bench's environment. The 50
schools (codes 100001-100050) and the learners, shared out between them in turn by
demo.generator, are made once and reused while they are there. A school's safeguarding lead,
working in that school, reads its learner list (page 1, a search, a level filter) and its
dashboard; a trust admin reads the trust dashboard, once this code has one.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHOOLS = 50
FIRST_CODE = 100001
LEARNERS = 100_000
ATTEMPTS = 300_000
SEED = 28
# The school measured: one in the middle of the trust, 2,000 learners like every other.
MEASURED_CODE = str(FIRST_CODE + SCHOOLS // 2 - 1)
SCHOOL_TARGET_MS = 150.0
TRUST_TARGET_MS = 300.0
DSL_USERNAME = "bench.trust.dsl"
TRUST_ADMIN_USERNAME = "bench.trust.admin"

Row = tuple[str, str, str, str]


def rows(env: dict[str, str], *, database_url: str, requests: int) -> list[Row]:
    """Measure the trust in a process on its own database and return its table rows."""
    from bench.run import ensure_database

    ensure_database(database_url)
    output = Path(f"/tmp/bench-trust-{os.getpid()}.json")  # noqa: S108 (ours, removed below)
    child_env = {
        **env,
        "DATABASE_URL": database_url,
        # Another database: its users, settings and schools must not meet the others' cache.
        "CACHE_KEY_PREFIX": "bench-trust",
    }
    try:
        subprocess.run(  # noqa: S603 (our own command line)
            [sys.executable, "-m", "bench.trust", f"--requests={requests}", f"--output={output}"],
            cwd=ROOT,
            env=child_env,
            check=True,
        )
        return [tuple(row) for row in json.loads(output.read_text())]
    except subprocess.CalledProcessError as error:
        return [("trust of 50 schools", f"failed (exit {error.returncode})", "", "FAIL")]
    finally:
        output.unlink(missing_ok=True)


def trust_schools() -> list:
    """Return the trust's 50 schools, made with their settings if missing."""
    from schools.models import DEFAULT_SCHOOL_CODE, PartnerSettings, School

    # The school the migrations made becomes the first of the trust: 50 schools, not 51.
    first = School.objects.filter(code=DEFAULT_SCHOOL_CODE).first()
    if first is not None and not School.objects.filter(code=str(FIRST_CODE)).exists():
        first.code, first.name = str(FIRST_CODE), "Bench academy 01"
        first.save()
    schools = []
    for number in range(1, SCHOOLS + 1):
        school, _ = School.objects.get_or_create(
            code=str(FIRST_CODE + number - 1), defaults={"name": f"Bench academy {number:02}"}
        )
        PartnerSettings.of(school.pk)
        schools.append(school)
    return schools


def ensure_trust() -> str:
    """Make the trust's schools and learners unless they are there; say which."""
    from assessments.models import AssessmentAttempt
    from demo.generator import cohort_clear, generate_cohort
    from learners.models import Learner

    schools = trust_schools()
    learners = Learner.objects.count()
    attempts = AssessmentAttempt.objects.count()
    if learners >= LEARNERS and attempts >= ATTEMPTS:
        return f"reused ({len(schools)} schools, {learners:,} learners, {attempts:,} attempts)"
    started = time.monotonic()
    if learners:
        print(f"Too small a trust ({learners:,} learners): clearing the generated part")
        cohort_clear(stdout=sys.stdout)
    print(
        f"Generating {LEARNERS:,} learners and {ATTEMPTS:,} attempts in {SCHOOLS} schools",
        flush=True,
    )
    generate_cohort(
        learners=LEARNERS,
        attempts=ATTEMPTS,
        seed=SEED,
        stdout=sys.stdout,
        school_ids=[school.pk for school in schools],
    )
    return f"generated in {time.monotonic() - started:.0f} s"


def staff_client(username: str, *, role: str, school_id: int | None = None):
    """Return a test client signed in as a member of staff with this role."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from accounts.services import staff_role_set

    user, _ = get_user_model().objects.get_or_create(username=username)
    staff_role_set(user=user, role=role, school_id=school_id)
    client = Client()
    client.force_login(user)
    return client


def trust_dashboard_url() -> str | None:
    """Return the trust dashboard's address, or None while this code has none."""
    from django.urls import NoReverseMatch, reverse

    try:
        return reverse("dashboard:trust")
    except NoReverseMatch:
        return None


def measure(*, requests: int) -> list[Row]:
    """Time a school's pages and the trust dashboard; return the table rows."""
    from accounts.models import StaffRole
    from bench.lists import timings
    from bench.support import percentile
    from learners.models import Learner, Level
    from schools.models import School

    school = School.objects.get(code=MEASURED_CODE)
    mine = Learner.objects.filter(school=school).exclude(last_name="").order_by("pk").first()
    term = mine.last_name if mine else "Smith"
    dsl = staff_client(DSL_USERNAME, role=StaffRole.DSL, school_id=school.pk)
    where = f"school {school.code}"
    measures = [
        (dsl, f"{where}: learner list page 1", "/learners/", {}, SCHOOL_TARGET_MS),
        (dsl, f"{where}: search ?q={term}", "/learners/", {"q": term}, SCHOOL_TARGET_MS),
        (
            dsl,
            f"{where}: level filter ?level={Level.SECONDARY.value}",
            "/learners/",
            {"level": Level.SECONDARY.value},
            SCHOOL_TARGET_MS,
        ),
        (dsl, f"{where}: dashboard /dashboard/", "/dashboard/", {}, SCHOOL_TARGET_MS),
    ]
    trust_url = trust_dashboard_url()
    if trust_url is not None:
        admin = staff_client(TRUST_ADMIN_USERNAME, role=StaffRole.TRUST_ADMIN)
        measures.append((admin, f"trust dashboard {trust_url}", trust_url, {}, TRUST_TARGET_MS))
    table: list[Row] = []
    for client, label, url, data, target in measures:
        spent = timings(client, url, data, requests)
        p50, p95 = percentile(spent, 0.5), percentile(spent, 0.95)
        table.append(
            (
                f"{label}: p50 / p95 ({requests} requests)",
                f"{p50:.1f} / {p95:.1f} ms",
                f"p95 < {target:g} ms",
                "PASS" if p95 < target else "FAIL",
            )
        )
    if trust_url is None:
        target = f"p95 < {TRUST_TARGET_MS:g} ms"
        table.append(("trust dashboard (dashboard:trust)", "not built yet", target, ""))
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50, help="requests per page")
    parser.add_argument("--output", type=Path, help="write the rows here as JSON")
    args = parser.parse_args()
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    print(f"Trust data set: {ensure_trust()}", flush=True)
    table = measure(requests=args.requests)
    if args.output:
        args.output.write_text(json.dumps(table))
    else:
        for row in table:
            print("  ".join(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
