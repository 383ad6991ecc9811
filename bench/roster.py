"""A trust's OneRoster roster at scale: its preview, and applying new pupils at the import's pace.

It runs in a process of its own on a database of its own (BENCH_ROSTER_DATABASE_URL), whose
roster rows (and the learners, groups and accounts they made) are cleared before each run.

- Preview: tests.roster_files.trust_spec() (20 schools, 20,000 pupils, 1,200 classes, 60,000
  enrolments) as a 1.1 zip and a 1.2 zip, read and planned as a sync does
  (roster.reading.read_roster, then roster.planning.plan_sync), each in a fresh process, timed
  from reading to plan, its RSS sampled every 5 ms: the growth is the peak less the RSS before
  reading. A first sync (the 20 schools made by schools.services.school_add, nothing else),
  then a second once the first plan's outcome is in the database (bench.roster_store).
- Applying: a roster of one school's new pupils through roster.services.roster_sync_start,
  the imports workers sending its rows as in the `import` part (bench.bulk), timed from the
  sync's start (its RosterSync made) to the last row's upstream outcome and to the last
  password hashed; what it registered is deleted afterwards.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PREVIEW_TARGET_SECONDS = 30.0
PREVIEW_TARGET_MB = 200.0
APPLY_SCHOOL_CODE = "BENCHROSTER"
RUN_TIMEOUT = 3600  # seconds, as bench.bulk: hashing on a busy machine takes minutes

Row = tuple[str, str, str, str]


def rows(env: dict[str, str], *, database_url: str, pupils: int, latency_ms: int) -> list[Row]:
    """Measure the roster in a process on its own database and return its table rows."""
    from bench.run import ensure_database

    ensure_database(database_url)
    output = Path(f"/tmp/bench-roster-{os.getpid()}.json")  # noqa: S108 (ours, removed below)
    child_env = {**env, "DATABASE_URL": database_url, "CACHE_KEY_PREFIX": "bench-roster"}
    command = [sys.executable, "-m", "bench.roster", f"--pupils={pupils}"]
    command += [f"--latency-ms={latency_ms}", f"--output={output}"]
    try:
        subprocess.run(command, cwd=ROOT, env=child_env, check=True)  # noqa: S603 (ours)
        return [tuple(row) for row in json.loads(output.read_text())]
    except subprocess.CalledProcessError as error:
        return [("roster", f"failed (exit {error.returncode})", "", "FAIL")]
    finally:
        output.unlink(missing_ok=True)


def preview_measure(path: Path, *, store: bool) -> dict:
    """Read and plan the zip as a sync does; return seconds, RSS growth and the plan's counts."""
    import gc

    from django.conf import settings
    from django.db import transaction

    from bench.support import rss_bytes
    from roster.planning import plan_sync
    from roster.reading import read_roster
    from schools.context import working_in

    gc.collect()
    start_rss, peak, done = rss_bytes(), [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss_bytes())
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    with working_in(None), transaction.atomic():
        files = read_roster(path, max_bytes=settings.ROSTER_MAX_UPLOAD_BYTES)
        plan = plan_sync(files)
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    figures = {
        "seconds": seconds,
        "grew_mb": (max(peak[0], rss_bytes()) - start_rss) / 2**20,
        "joined": plan.joined,
        "changed": plan.changed,
        "left": plan.left,
        "classes": sum(len(school.new_classes) for school in plan.schools),
        "problems": len(plan.problems),
        "held": plan.held,
    }
    if store:
        from bench.roster_store import plan_store

        started = time.perf_counter()
        plan_store(plan)
        figures["stored_seconds"] = time.perf_counter() - started
    return figures


def preview_rows(folder: Path) -> list[Row]:
    """Preview the trust's roster, both versions, a first sync and then a second; table rows."""
    from schools.services import school_add
    from tests.roster_files import roster_write, trust_spec

    spec = trust_spec()
    for school in spec.schools:
        school_add(code=school.code, name=school.name)
    zips = {
        version: roster_write(spec, folder / f"trust-{version}", version=version, as_zip=True)
        for version in ("1.1", "1.2")
    }
    scale = (
        f"{len(spec.schools)} schools, {len(spec.pupils):,} pupils, {len(spec.classes):,}"
        f" classes, {len(spec.enrolments):,} enrolments"
    )
    table: list[Row] = []
    for sync in ("first", "second"):
        for version, path in zips.items():
            # A fresh process each: the RSS a preview grows by, not what an earlier one freed.
            store = sync == "first" and version == "1.2"  # after both first previews
            figures = _preview_in_process(path, store=store)
            within = (
                figures["seconds"] < PREVIEW_TARGET_SECONDS
                and figures["grew_mb"] < PREVIEW_TARGET_MB
            )
            plan = (
                f"{figures['joined']:,} joining, {figures['classes']:,} new classes,"
                f" {figures['changed']:,} changed, {figures['left']:,} leaving,"
                f" {figures['problems']:,} problems{', held' if figures['held'] else ''}"
            )
            table.append(
                (
                    f"roster preview ({scale}), {sync} sync, OneRoster {version} zip:"
                    " read + plan; RSS growth",
                    f"{figures['seconds']:.1f} s; +{figures['grew_mb']:.0f} MB ({plan})",
                    f"< {PREVIEW_TARGET_SECONDS:g} s; < {PREVIEW_TARGET_MB:g} MB",
                    "PASS" if within else "FAIL",
                )
            )
            if store:
                print(f"(first plan stored in bulk in {figures['stored_seconds']:.0f} s)")
    return table


def _preview_in_process(path: Path, *, store: bool) -> dict:
    output = path.with_suffix(".json")
    command = [sys.executable, "-m", "bench.roster", f"--preview={path}", f"--output={output}"]
    subprocess.run(command + (["--store"] if store else []), cwd=ROOT, check=True)  # noqa: S603
    return json.loads(output.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pupils", type=int, default=1000, help="new pupils the sync applies")
    parser.add_argument("--latency-ms", type=int, default=50, help="the sandbox's on create")
    parser.add_argument("--preview", type=Path, help="only preview this zip (and --store)")
    parser.add_argument("--store", action="store_true", help="put the plan in the database")
    parser.add_argument("--output", type=Path, help="write the rows (or figures) here as JSON")
    args = parser.parse_args()
    import django
    from django.core.management import call_command

    django.setup()
    if args.preview:
        figures = preview_measure(args.preview, store=args.store)
        args.output.write_text(json.dumps(figures))
        return 0
    from bench.roster_apply import apply_rows
    from bench.roster_store import roster_clear

    call_command("migrate", verbosity=0)
    with tempfile.TemporaryDirectory(prefix="bench-roster-") as folder:
        print(f"Roster: {roster_clear()}", flush=True)
        table = preview_rows(Path(folder))
        print(f"Roster: {roster_clear()}", flush=True)
        table += apply_rows(Path(folder), pupils=args.pupils, latency_ms=args.latency_ms)
    if args.output:
        args.output.write_text(json.dumps(table))
    else:
        for row in table:
            print("  ".join(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
