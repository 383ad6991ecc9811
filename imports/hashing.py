"""Imported passwords hashed off the run's path: while staff read the preview, or during the call.

Argon2id costs about 20 ms of a core a password, more than the rest of a row's work together.
A checked file's passwords are hashed by background tasks while staff read its preview
(`preview_passwords_hash`, queued behind every row still to send, stopping once the job is
confirmed), so a job confirmed after that sends its rows with no hashing left to do and each
account opens with its outcome. A row not hashed by then is hashed on a thread of its own
while its upstream call is under way (`hash_meanwhile`): Argon2 (argon2-cffi) leaves the GIL,
and the call mostly waits on the network.
"""

import logging
from concurrent.futures import Future, ThreadPoolExecutor

from cryptography.fernet import InvalidToken
from django.contrib.auth.hashers import make_password
from django.views.decorators.debug import sensitive_variables

from imports.models import ImportJob, ImportRow
from imports.passwords import password_decrypt

logger = logging.getLogger(__name__)

# One hash at a time per worker process: as many at once as there are imports workers.
_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-hash")

# Rows a preview's hashing task takes: a worker busy with one takes up the rows of a job
# confirmed meanwhile within about half a second.
PREVIEW_HASH_BATCH = 20


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


def preview_batches(job_id: int) -> list[list[int]]:
    """Return the job's rows with a password to hash, PREVIEW_HASH_BATCH at a time, in order."""
    row_ids = list(
        _unhashed(ImportRow.objects.filter(job_id=job_id))
        .order_by("row_number")
        .values_list("pk", flat=True)
    )
    return [
        row_ids[start : start + PREVIEW_HASH_BATCH]
        for start in range(0, len(row_ids), PREVIEW_HASH_BATCH)
    ]


@sensitive_variables("password")
def preview_passwords_hash(*, row_ids: list[int]) -> int:
    """Hash the rows' passwords while their job is a preview; return how many.

    Each row is read again just before its hash. Once staff confirm the job, this stops: a
    worker held here would keep its share of rows waiting, and each row left is hashed during
    its own call instead. A discarded preview's passwords are wiped, and never hashed.
    """
    hashed = 0
    for row_id in row_ids:
        token = (
            _unhashed(ImportRow.objects.filter(pk=row_id))
            .filter(job__state=ImportJob.State.PREVIEW)
            .values_list("password_encrypted", flat=True)
            .first()
        )
        if token is None:
            continue
        try:
            password = password_decrypt(token)
        except InvalidToken:
            continue  # the secret key changed: the run fails the row and says why
        try:
            password_hash = make_password(password)
        except Exception as error:
            # Never the password: only what went wrong. Each row left is hashed when sent.
            logger.warning(
                "Hashing a preview's passwords failed (%s); they are hashed when sent",
                type(error).__name__,
            )
            break
        # Written only if the row is still waiting with the same password: never into a row
        # claimed, wiped or discarded while this hash was made.
        hashed += _unhashed(ImportRow.objects.filter(pk=row_id, password_encrypted=token)).update(
            password_hash=password_hash
        )
    return hashed


def _unhashed(rows):
    """Narrow to rows waiting to be sent with a password kept and no hash yet."""
    return rows.filter(state=ImportRow.State.QUEUED, password_hash="").exclude(
        password_encrypted=""
    )
