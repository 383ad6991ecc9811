"""Small helpers shared by the benchmark parts: ports, percentiles, process memory."""

import os
import socket
import time


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, timeout: float) -> None:
    """Wait until something accepts connections on the port."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing answered on port {port} within {timeout:g} s")


def percentile(values: list[float], fraction: float) -> float:
    """Return the nearest-rank percentile of the values (fraction 0.5 = median)."""
    ordered = sorted(values)
    rank = max(1, round(fraction * len(ordered) + 0.5 - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]


_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    """Return this process's resident set size (Linux /proc)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * _PAGE_SIZE
