"""Ending every session of one account: signing out everywhere, a reset, a deactivation.

A signed-in session's key starts with its user's id (accounts.sessions, accounts.db_sessions),
so one indexed query finds them all. Each is deleted through the session engine, which drops
its cache copy too (cached_db); the account's cached copy (accounts.user_cache) goes as well.
A session deleted while its request runs is not saved again: Django answers that request with
"the session was deleted" and the next one finds no session, so it signs in afresh.
"""

from importlib import import_module

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.db.models.signals import post_init, post_save

from accounts.sessions import user_key_prefix
from accounts.user_cache import forget_cached_user


def session_keys_of(user_id: int) -> list[str]:
    """Return the keys of the account's sessions still kept (expired ones included)."""
    return list(
        Session.objects.filter(session_key__startswith=user_key_prefix(user_id)).values_list(
            "session_key", flat=True
        )
    )


def sessions_end(user_id: int, *, keep: str | None = None) -> int:
    """End every session of the account but `keep` (a session key); return how many ended."""
    store = import_module(settings.SESSION_ENGINE).SessionStore()
    ended = 0
    for key in session_keys_of(user_id):
        if key != keep:
            store.delete(key)
            ended += 1
    forget_cached_user(user_id)
    return ended


def _remember_active(sender, instance, **kwargs) -> None:
    # Read from the loaded fields only: a deferred is_active must not cost a query here.
    instance._loaded_active = instance.__dict__.get("is_active")


def _end_sessions_when_deactivated(sender, instance, created, update_fields=None, **kwargs):
    if created or instance.is_active:
        instance._loaded_active = instance.is_active
        return
    if update_fields is not None and "is_active" not in update_fields:
        return
    # Only on the save that deactivates (unknown: loaded without is_active, say), so saving
    # an account that was already inactive costs nothing.
    if getattr(instance, "_loaded_active", None) is not False:
        sessions_end(instance.pk)
    instance._loaded_active = False


def connect_session_ending_signals() -> None:
    """End an account's sessions the moment it is saved as no longer active, wherever that is.

    (The staff pages, the Django admin, a command, an erasure.) A queryset's update() sends no
    signal: code that deactivates that way calls sessions_end itself.
    """
    user_model = get_user_model()
    post_init.connect(_remember_active, sender=user_model, dispatch_uid="sessions.loaded_active")
    post_save.connect(
        _end_sessions_when_deactivated, sender=user_model, dispatch_uid="sessions.deactivated"
    )
