"""Settings for the portal processes a test starts: the portal's own, quicker where it waits.

A test gives them DJANGO_SETTINGS_MODULE=tests.process_settings: passwords are hashed with MD5
(the real hasher takes most of a second a password, on purpose, and an import hashes one a
row), and static files keep their names, so a production page renders without collectstatic.
"""

from portal.settings import *  # noqa: F403
from portal.settings import STORAGES

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    **STORAGES,
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
