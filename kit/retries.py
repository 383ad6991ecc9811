"""The backoff of background work that may wait: answer pictures and read-aloud audio."""

from datetime import timedelta

# Waits after the 1st, 2nd, 3rd and 4th failed try; after that, once a day.
SCHEDULE = (timedelta(minutes=1), timedelta(minutes=5), timedelta(minutes=30), timedelta(hours=2))
DAILY = timedelta(days=1)


def retry_delay(tries: int) -> timedelta:
    """Return how long to wait after failed try number `tries` (1, 2, ...)."""
    return SCHEDULE[tries - 1] if 0 < tries <= len(SCHEDULE) else DAILY
