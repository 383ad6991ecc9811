"""Rows read on every request (the user, the partner's settings), cached until they change.

Every signed-in request loads its user (with the Learner and staff profile) to check the
session's auth hash, is_active and the learner's status: one database query each time. With a
shared cache (ROW_CACHE_SECONDS > 0) the row comes from the cache instead, and every change
that those checks read drops it: a save or delete of the User, its Learner or StaffProfile, a
change of its groups (signals below), and the few queryset updates that bypass signals
(forget_cached_user, called where they run). The checks themselves run on every request as
before, on the cached copy.
"""

import time
from contextvars import ContextVar

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.signals import request_finished
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save

_KEY = "portal.user:{}"
MEMORY_LIMIT = 10_000


def user_cache_key(user_id) -> str:
    """Return the cache key of a user's cached copy."""
    return _KEY.format(user_id)


def cached_user(user_id, load):
    """Return the user `load(user_id)` finds, from the cache while nothing about it changed."""
    return cached_row(user_cache_key(user_id), lambda: load(user_id))


# A row read from the cache together with this request's session (portal.sessions): the
# key and what the cache held (None: nothing), used once by cached_row.
_prefetched: ContextVar[tuple[str, object] | None] = ContextVar("prefetched_row", default=None)


def prefetch_row(key: str | None, row) -> None:
    """Hand cached_row what the cache held under `key`, read beside the session."""
    _prefetched.set(None if key is None else (key, row))


def cached_row(key: str, load):
    """Return what `load()` returns, from the shared cache while it is not dropped (forget_row).

    None is never kept: a missing account signs nobody in, and a new one must show at once.
    """
    seconds = settings.ROW_CACHE_SECONDS
    if seconds <= 0:
        return load()
    prefetched = _prefetched.get()
    if prefetched is not None and prefetched[0] == key:
        _prefetched.set(None)
        row = prefetched[1]
    else:
        row = cache.get(key)
    if row is None:
        row = load()
        if row is not None:
            cache.set(key, row, seconds)
    return row


# Rows read through cached_rows, also kept in this process for ROW_MEMORY_SECONDS: key ->
# (when it goes, the row). Never the user (its checks must see another process's change at
# once): only rows a page may show a moment late, such as the partner's settings.
_memory: dict[str, tuple[float, object]] = {}


def cached_rows(loaders: dict[str, object]) -> dict[str, object]:
    """Return cached_row for each key of `loaders` (key -> load), in one cache round trip.

    What was read is kept in this process's memory for ROW_MEMORY_SECONDS too, so a change
    made by another process shows here within that time (one made here, at once).
    """
    seconds = settings.ROW_CACHE_SECONDS
    if seconds <= 0:
        return {key: load() for key, load in loaders.items()}
    now = time.monotonic()
    rows = {}
    for key in loaders:
        kept = _memory.get(key)
        if kept is not None and kept[0] > now:
            rows[key] = kept[1]
    missing = [key for key in loaders if key not in rows]
    found = cache.get_many(missing) if missing else {}
    for key in missing:
        row = found.get(key)
        if row is None:
            row = loaders[key]()
            if row is not None:
                cache.set(key, row, seconds)
        rows[key] = row
        if settings.ROW_MEMORY_SECONDS > 0:
            if len(_memory) >= MEMORY_LIMIT:
                _memory.clear()  # a few rows per school: the limit is never reached in use
            _memory[key] = (now + settings.ROW_MEMORY_SECONDS, row)
    return rows


def _forget_prefetched(**kwargs) -> None:
    _prefetched.set(None)  # never carried into the thread's next request


def forget_row(key: str) -> None:
    """Drop a cached row now and once the transaction commits.

    Dropped again after the commit: a request that read the old row before the commit may
    have cached it meanwhile.
    """
    _memory.pop(key, None)
    cache.delete(key)
    transaction.on_commit(lambda: (_memory.pop(key, None), cache.delete(key)))


def forget_cached_user(user_id) -> None:
    """Drop a user's cached copy now and once the transaction commits."""
    if user_id is not None:
        forget_row(_KEY.format(user_id))


def _user_changed(sender, instance, **kwargs) -> None:
    forget_cached_user(instance.pk)


def _linked_row_changed(sender, instance, **kwargs) -> None:
    forget_cached_user(getattr(instance, "user_id", None))


def _groups_changed(sender, instance, action, pk_set, model, **kwargs) -> None:
    if not action.startswith("post_"):
        return
    if isinstance(instance, get_user_model()):
        forget_cached_user(instance.pk)
    elif pk_set:  # a group's members changed, from the group's side
        for user_id in pk_set:
            forget_cached_user(user_id)


def forget_user_when_changed(model) -> None:
    """Drop the cached copy of a row's `user` whenever a row of `model` is saved or deleted."""
    uid = f"user_cache.{model._meta.label}"
    post_save.connect(_linked_row_changed, sender=model, dispatch_uid=uid)
    post_delete.connect(_linked_row_changed, sender=model, dispatch_uid=f"{uid}.delete")


def connect_user_cache_signals() -> None:
    """Drop a user's cached copy when the account, its staff profile or its groups change.

    (The learners app adds its Learner, which this layer does not import.)
    """
    from portal.models import PARTNER_SETTINGS_KEY, PartnerSettings, StaffProfile

    request_finished.connect(_forget_prefetched, dispatch_uid="user_cache.prefetched")
    user_model = get_user_model()
    post_save.connect(_user_changed, sender=user_model, dispatch_uid="user_cache.user")
    post_delete.connect(_user_changed, sender=user_model, dispatch_uid="user_cache.user.delete")
    forget_user_when_changed(StaffProfile)
    m2m_changed.connect(
        _groups_changed, sender=user_model.groups.through, dispatch_uid="user_cache.groups"
    )
    # The partner's settings, read on many pages (PartnerSettings.current).
    for signal in (post_save, post_delete):
        signal.connect(
            lambda **kwargs: forget_row(PARTNER_SETTINGS_KEY),
            sender=PartnerSettings,
            weak=False,
            dispatch_uid=f"user_cache.partner_settings.{signal is post_save}",
        )
