"""Reads of staff accounts that several pages share."""

from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet

from accounts.access import STAFF_GROUP


def staff_accounts(*, include_inactive: bool = False) -> QuerySet:
    """Return the staff accounts (never a learner's) by name; only those who can sign in."""
    accounts = get_user_model().objects.filter(
        Q(staff_profile__isnull=False) | Q(groups__name=STAFF_GROUP) | Q(is_superuser=True),
        learner__isnull=True,
    )
    if not include_inactive:
        accounts = accounts.filter(is_active=True)
    return accounts.distinct().order_by("last_name", "first_name", "username")
