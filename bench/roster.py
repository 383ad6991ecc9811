"""Reading a trust's OneRoster files: 20,000 pupils, 1,200 classes, 60,000 enrolments.

`roster_read_figures()` writes the roster of `tests.roster_files.trust_spec()` as a zip (1.1 and
1.2), then reads each with roster.reading, timing it and tracing the memory Python allocates
(tracemalloc's peak on a second read: the records and what reading holds on the way, not the
interpreter). On this machine: about 1.1 s and 45 MB for either version.
"""

import tempfile
import time
import tracemalloc
from pathlib import Path

from roster.reading import read_roster
from tests.roster_files import roster_write, trust_spec

TARGET_SECONDS = 5.0
TARGET_MB = 200.0


def roster_read_figures() -> list[dict]:
    """Return, per version, the seconds and peak MB that reading the trust's zip takes."""
    spec = trust_spec()
    figures = []
    with tempfile.TemporaryDirectory() as folder:
        for version in ("1.1", "1.2"):
            path = roster_write(
                spec, Path(folder) / f"trust-{version}", version=version, as_zip=True
            )
            started = time.perf_counter()
            found = read_roster(path)
            seconds = time.perf_counter() - started
            del found
            tracemalloc.start()  # a second read, traced: tracing slows it down threefold
            found = read_roster(path)
            peak = tracemalloc.get_traced_memory()[1] / 1_000_000
            tracemalloc.stop()
            figures.append(
                {
                    "version": version,
                    "seconds": round(seconds, 2),
                    "peak_mb": round(peak, 1),
                    "within_target": seconds < TARGET_SECONDS and peak < TARGET_MB,
                    "people": len(found.people),
                    "classes": len(found.classes),
                    "enrolments": len(found.enrolments),
                    "problems": len(found.problems),
                }
            )
    return figures


if __name__ == "__main__":
    import django

    django.setup()
    for row in roster_read_figures():
        print(row)
