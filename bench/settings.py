"""Settings for `make bench`: the portal's own, plus a bare view to measure against.

Only the benchmark uses this module, so production has no bare view. The environment
(set by bench/run.py) turns DEBUG off and points the database at the bench PostgreSQL.
"""

from portal.settings import *  # noqa: F403
from portal.settings import DATABASES

ROOT_URLCONF = "bench.urls"

# Persistent database connections, as a production deployment runs them (DATABASE_URL
# `?conn_max_age=600`): a new PostgreSQL connection per request would dwarf every page.
DATABASES["default"].setdefault("CONN_MAX_AGE", 600)

# The benchmark talks plain http to 127.0.0.1: no redirect to https.
SECURE_SSL_REDIRECT = False
