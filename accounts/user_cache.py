"""The signed-in user, read on every request, kept in the shared cache until it changes.

Every signed-in request loads its user (with the Learner and staff profile) to check the
session's auth hash, is_active and the learner's status: one database query each time. With a
shared cache (ROW_CACHE_SECONDS > 0) the row comes from the cache instead, and every change
that those checks read drops it: a save or delete of the User, its Learner, StaffProfile or
SchoolRoles, a change of its groups (signals below), and the few queryset updates that bypass
signals (forget_cached_user, called where they run). The checks themselves run on every request as
before, on the cached copy.
"""

from django.contrib.auth import get_user_model
from django.db.models.signals import m2m_changed, post_delete, post_save

from kit.row_cache import cached_row, forget_row

_KEY = "portal.user:{}"


def user_cache_key(user_id) -> str:
    """Return the cache key of a user's cached copy."""
    return _KEY.format(user_id)


def cached_user(user_id, load):
    """Return the user `load(user_id)` finds, from the cache while nothing about it changed."""
    return cached_row(user_cache_key(user_id), lambda: load(user_id))


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
    from accounts.models import SchoolRole, StaffProfile

    user_model = get_user_model()
    post_save.connect(_user_changed, sender=user_model, dispatch_uid="user_cache.user")
    post_delete.connect(_user_changed, sender=user_model, dispatch_uid="user_cache.user.delete")
    forget_user_when_changed(StaffProfile)
    forget_user_when_changed(SchoolRole)
    m2m_changed.connect(
        _groups_changed, sender=user_model.groups.through, dispatch_uid="user_cache.groups"
    )
