"""A row's password hashed on a thread of its own while its upstream call is under way.

Argon2 (argon2-cffi) leaves the GIL while it hashes, and the call mostly waits on the network:
in one worker process the two overlap, and the row's account opens with its outcome.
"""

import logging
from concurrent.futures import Future, ThreadPoolExecutor

from django.contrib.auth.hashers import make_password
from django.views.decorators.debug import sensitive_variables

logger = logging.getLogger(__name__)

# One hash at a time per worker process: as many at once as there are imports workers.
_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-hash")


@sensitive_variables("password")
def hash_meanwhile(password: str) -> Future:
    """Start hashing the password; the future's result is its hash."""
    return _pool.submit(make_password, password)


def hashed_or_none(hashing: Future | None) -> str | None:
    """Return the hash once made, or None if it failed (its hashing is then queued instead)."""
    if hashing is None:
        return None
    try:
        return hashing.result()
    except Exception as error:
        # Never the password: only what went wrong. Its own task hashes it again.
        logger.warning(
            "Hashing an imported password failed (%s); queued again", type(error).__name__
        )
        return None
