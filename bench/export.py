"""The results export of the whole cohort, consumed fully: wall time and memory growth.

Memory is this process's resident set size (RSS, from /proc), sampled every 2 ms by a thread
while the streamed response is read: growth = peak during the export - RSS just before it.
"""

import gc
import threading
import time

from bench.lists import staff_client
from bench.support import rss_bytes

TARGET_GROWTH_MB = 50.0
EXPECTED_ROWS = 100_000
URL = "/learners/results.csv"


class PeakRss:
    """Sample the process's RSS in a thread and keep the highest value seen."""

    def __init__(self, interval: float = 0.002):
        self.interval = interval
        self.peak = rss_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_bytes())
            time.sleep(self.interval)

    def __enter__(self) -> "PeakRss":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_bytes())


def rows() -> list[tuple[str, str, str, str]]:
    """Export the results once and return the table rows."""
    client = staff_client()
    # Warm up the code paths (imports, templates) on an empty date range, not the data.
    b"".join(client.get(URL, {"from": "1900-01-01", "to": "1900-01-02"}).streaming_content)
    gc.collect()
    before = rss_bytes()
    lines = 0
    size = 0
    started = time.perf_counter()
    with PeakRss() as sampler:
        response = client.get(URL)
        if response.status_code != 200 or not response.streaming:
            raise RuntimeError(f"{URL} answered {response.status_code}, not a streamed file")
        for chunk in response.streaming_content:
            lines += chunk.count(b"\n")
            size += len(chunk)
    wall = time.perf_counter() - started
    after = rss_bytes()
    growth_mb = (sampler.peak - before) / 2**20
    data_rows = lines - 1  # the header
    return [
        (
            f"results export {URL}: rows, wall time",
            f"{data_rows:,} rows ({size / 2**20:.1f} MB) in {wall:.1f} s",
            f">= {EXPECTED_ROWS:,} rows",
            "PASS" if data_rows >= EXPECTED_ROWS else "FAIL",
        ),
        (
            "results export: RSS growth (peak - before; after)",
            f"{growth_mb:.1f} MB (before {before / 2**20:.0f}, peak {sampler.peak / 2**20:.0f},"
            f" after {after / 2**20:.0f} MB)",
            f"< {TARGET_GROWTH_MB:g} MB",
            "PASS" if growth_mb < TARGET_GROWTH_MB else "FAIL",
        ),
    ]
