"""Emptying the database after a transactional test by DELETE on PostgreSQL, not TRUNCATE.

Django empties every table after a test that commits (TransactionTestCase, `live_server`) with
one TRUNCATE of all of them, which on PostgreSQL makes new files for each table: about a
second a test on this project's 2-core machines, for tables that hold a few rows. DELETE of
those rows takes a few milliseconds. Django makes every foreign key DEFERRABLE INITIALLY
DEFERRED, and the flush runs in one transaction, so the order of the tables does not matter;
the schema has no triggers. A flush that resets sequences keeps Django's TRUNCATE.

The content types and permissions stay, since tests never change them, and the post-migrate
signal that Django sends after each flush is not sent: it would only make them again (no app
of the portal listens to it), at about a quarter of a second a test.
"""

from django.db.backends.postgresql.operations import DatabaseOperations

KEPT = frozenset({"django_content_type", "auth_permission"})

_truncate = DatabaseOperations.sql_flush


def sql_flush_by_delete(self, style, tables, *, reset_sequences=False, allow_cascade=False):
    """Return DELETE statements for the tables (Django's TRUNCATE when sequences reset)."""
    if reset_sequences:
        return _truncate(
            self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
        )
    return [
        f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))};"
        for table in tables
        if table not in KEPT
    ]


def no_post_migrate_signal(*args, **kwargs) -> None:
    """Stand in for the post-migrate signal of `flush`: nothing it makes was deleted."""
