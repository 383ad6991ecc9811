"""Sessions in the database alone (no shared cache), keyed by their user as accounts.sessions.

Without a shared cache a process's own memory would keep a session another process ended, so
the sessions live in the database only; their keys still name their user, so that all of one
person's can be found and ended (accounts.session_ending).
"""

from django.contrib.sessions.backends.db import SessionStore as DbSessionStore

from accounts.sessions import UserKeyedSessions


class SessionStore(UserKeyedSessions, DbSessionStore):
    pass
