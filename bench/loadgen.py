"""A small load generator for when wrk is missing: threads with keep-alive http.client.

Usage: python -m bench.loadgen URL SECONDS [COOKIE]; prints requests per second.
"""

import sys
import threading
import time
from http.client import HTTPConnection
from urllib.parse import urlsplit

CONNECTIONS = 4


def main() -> None:
    url, seconds = urlsplit(sys.argv[1]), float(sys.argv[2])
    headers = {"Cookie": sys.argv[3]} if len(sys.argv) > 3 and sys.argv[3] else {}
    deadline = time.monotonic() + seconds
    counts = [0] * CONNECTIONS

    def worker(slot: int) -> None:
        connection = HTTPConnection(url.hostname, url.port, timeout=30)
        while time.monotonic() < deadline:
            try:
                connection.request("GET", url.path, headers=headers)
                response = connection.getresponse()
                response.read()
                if response.status != 200:
                    raise SystemExit(f"{url.path} answered {response.status}")
                if response.getheader("Connection", "").lower() == "close":
                    connection.close()
            except (ConnectionError, OSError):
                connection.close()
                continue
            counts[slot] += 1

    threads = [threading.Thread(target=worker, args=(slot,)) for slot in range(CONNECTIONS)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(f"{sum(counts) / (time.monotonic() - started):.1f}")


if __name__ == "__main__":
    main()
