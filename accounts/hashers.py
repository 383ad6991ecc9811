"""Passwords hashed with Argon2id at the parameters the settings give (OWASP's by default)."""

from django.conf import settings
from django.contrib.auth.hashers import Argon2PasswordHasher


class PortalArgon2PasswordHasher(Argon2PasswordHasher):
    """Django's Argon2id hasher with its costs read from the settings.

    Django's own defaults ask for 100 MiB and 8 lanes a hash (3 GB for a class of 30 signing in
    at once); OWASP's minimum, 19 MiB, 2 passes and 1 lane, takes about 20 ms of one core. A
    hash made with other costs still checks, and is made again at the next sign-in.
    """

    @property
    def time_cost(self) -> int:  # type: ignore[override]
        return settings.PASSWORD_ARGON2_TIME_COST

    @property
    def memory_cost(self) -> int:  # type: ignore[override]
        return settings.PASSWORD_ARGON2_MEMORY_KIB

    @property
    def parallelism(self) -> int:  # type: ignore[override]
        return settings.PASSWORD_ARGON2_PARALLELISM
