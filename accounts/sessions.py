"""Sessions whose key names their user ("u42-…"), so that all of one person's can be ended.

Both engines the portal runs give a signed-in session a key that starts with its user's id:
accounts.sessions (this module: cached_db, with a shared cache) and accounts.db_sessions (the
database alone, without one). Ending someone's sessions (accounts.session_ending) is then one
indexed query for their keys, whichever engine wrote them.

With the cache, a signed-in request read the session, then the user (accounts.user_cache): two
round trips to Redis, each about the cost of a bare page. Here loading the session reads both
keys in one get_many and hands the user to accounts.user_cache, which checks it exactly as one
it read itself. Anything else (an old key, a cache miss) loads as cached_db always did.
"""

from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.base import VALID_KEY_CHARS
from django.contrib.sessions.backends.cached_db import SessionStore as CachedDbSessionStore
from django.utils.crypto import get_random_string

from accounts.user_cache import user_cache_key
from kit.row_cache import prefetch_row

KEY_LENGTH = 40  # the session table's column


def user_key_prefix(user_id) -> str:
    """Return how the keys of a user's signed-in sessions start."""
    return f"u{user_id}-"


class UserKeyedSessions:
    """A session store mixin: a signed-in session's key starts with user_key_prefix."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        # Signed in (django.contrib.auth.login): a new key that names the user.
        if key == SESSION_KEY and self.session_key and _user_id_of(self.session_key) != str(value):
            self.cycle_key()

    def _get_new_session_key(self):
        user_id = getattr(self, "_session_cache", {}).get(SESSION_KEY)
        if user_id is None:
            return super()._get_new_session_key()
        prefix = user_key_prefix(user_id)
        while True:
            key = prefix + get_random_string(KEY_LENGTH - len(prefix), VALID_KEY_CHARS)
            if not self.exists(key):
                return key


class SessionStore(UserKeyedSessions, CachedDbSessionStore):
    def load(self):
        user_id = _user_id_of(self.session_key)
        if user_id is None:
            prefetch_row(None, None)
            return super().load()
        user_key = user_cache_key(user_id)
        try:
            found = self._cache.get_many([self.cache_key, user_key])
        except Exception:  # as cached_db: the database still has the session
            found = {}
        prefetch_row(user_key, found.get(user_key))
        data = found.get(self.cache_key)
        return super().load() if data is None else data


def _user_id_of(session_key: str | None) -> str | None:
    """Return the user id a session key names, or None for a key that names nobody."""
    if not session_key or not session_key.startswith("u") or "-" not in session_key:
        return None
    user_id = session_key[1 : session_key.index("-")]
    return user_id if user_id.isdigit() else None
